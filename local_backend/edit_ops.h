// Applies one parsed edit operation to an RGBA image, in place. Integer arithmetic throughout, so
// results are exact and deterministic (see docs/local-backend.md for each formula).
#pragma once

#include "common/result.h"
#include "imaging/codec.h"
#include "local_backend/edit_parser.h"

namespace imgmcp::local {

// kInvalidArgument for a crop outside the image; kTooLarge for a resize over limits.max_pixels.
Status ApplyEdit(imaging::Image& img, const EditOp& op, const imaging::DecodeLimits& limits);

}  // namespace imgmcp::local
