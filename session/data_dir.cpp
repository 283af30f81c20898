#include "session/data_dir.h"

namespace imgmcp::session {
namespace {
bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
}  // namespace

bool IsValidSessionId(std::string_view id) {
  if (id.empty() || id.size() > 64 || !IsAlnum(id[0])) return false;
  for (char c : id) {
    if (!IsAlnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

bool IsValidFileExtension(std::string_view ext) {
  if (ext.size() < 2 || ext.size() > 9 || ext[0] != '.') return false;
  for (char c : ext.substr(1)) {
    if (!IsAlnum(c)) return false;
  }
  return true;
}

std::string DataDirLayout::VersionFileName(int64_t version, std::string_view ext) {
  std::string name = "v" + std::to_string(version);
  name += ext;
  return name;
}

}  // namespace imgmcp::session
