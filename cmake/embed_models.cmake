# Writes OUT, a C++ source holding each model file of MODELS_DIR as a string
# (tpusim::model::LibraryFiles(), declared in src/model/library_data.h).
# Run as: cmake -DMODELS_DIR=... -DOUT=... -P embed_models.cmake
file(GLOB files "${MODELS_DIR}/*.toml")
list(SORT files)
set(body "// Generated from models/*.toml by cmake/embed_models.cmake; do not edit.\n")
string(APPEND body "#include \"model/library_data.h\"\n\nnamespace tpusim::model {\nnamespace {\n")
string(APPEND body "constexpr LibraryFile kFiles[] = {\n")
foreach(f IN LISTS files)
  get_filename_component(name "${f}" NAME)
  file(READ "${f}" text)
  string(APPEND body "    {\"${name}\", R\"tpusim_toml(${text})tpusim_toml\"},\n")
endforeach()
string(APPEND body "};\n}  // namespace\n\n")
string(APPEND body "std::span<const LibraryFile> LibraryFiles() { return kFiles; }\n\n")
string(APPEND body "}  // namespace tpusim::model\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
