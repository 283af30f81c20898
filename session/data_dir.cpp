#include "session/data_dir.h"

#include "common/ascii.h"

namespace imgmcp::session {

bool IsValidSessionId(std::string_view id) {
  if (id.empty() || id.size() > 64 || !IsAsciiAlnum(id[0])) return false;
  for (char c : id) {
    if (!IsAsciiAlnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

bool IsValidFileExtension(std::string_view ext) {
  if (ext.size() < 2 || ext.size() > 9 || ext[0] != '.') return false;
  for (char c : ext.substr(1)) {
    if (!IsAsciiAlnum(c)) return false;
  }
  return true;
}

std::string DataDirLayout::VersionFileName(int64_t version, std::string_view ext) {
  std::string name = "v" + std::to_string(version);
  name += ext;
  return name;
}

}  // namespace imgmcp::session
