# Writes OUT, a C++ source defining `std::string_view NAMESPACE::FUNCTION()`
# that returns the text of IN (a data file built into the binary).
# Run as: cmake -DIN=... -DOUT=... -DNAMESPACE=... -DFUNCTION=... -P embed_text.cmake
file(READ "${IN}" text)
get_filename_component(name "${IN}" NAME)
set(body "// Generated from ${name} by cmake/embed_text.cmake; do not edit.\n")
string(APPEND body "#include <string_view>\n\nnamespace ${NAMESPACE} {\n\n")
string(APPEND body "std::string_view ${FUNCTION}() {\n  return R\"tpusim_text(${text})tpusim_text\";\n}\n\n")
string(APPEND body "}  // namespace ${NAMESPACE}\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
