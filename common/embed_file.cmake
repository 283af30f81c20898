# Turns one file into a C++ source that defines `std::string_view <FUNCTION>()` in namespace
# <NAMESPACE>, returning the file's bytes. Run at build time (cmake -P), so the file is embedded
# without any other tool: -DINPUT=… -DOUTPUT=… -DNAMESPACE=… -DFUNCTION=…
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
# 20 bytes a line, each as 0xNN.
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){20})" "\\1\n    " bytes "${bytes}")
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
"// Generated at build time from ${name} by embed_file.cmake. Do not edit.
#include <cstddef>
#include <string_view>

namespace ${NAMESPACE} {
namespace {
constexpr unsigned char kBytes[${size} + 1] = {
    ${bytes}0x00};
}  // namespace

std::string_view ${FUNCTION}() {
  return std::string_view(reinterpret_cast<const char*>(kBytes), ${size});
}

}  // namespace ${NAMESPACE}
")
# Rewrite only on change, so an unchanged file does not recompile.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
