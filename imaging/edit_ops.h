// Applies one parsed edit operation to an RGBA image, in place. Integer arithmetic throughout, so
// results are exact and deterministic (see docs/local-backend.md for each formula).
#pragma once

#include "common/result.h"
#include "imaging/codec.h"
#include "imaging/edit_parser.h"

namespace imgmcp::imaging {

// kInvalidArgument for a crop outside the image; kTooLarge for a resize over limits.max_pixels.
Status ApplyEdit(Image& image, const EditOp& op, const DecodeLimits& limits);

}  // namespace imgmcp::imaging
