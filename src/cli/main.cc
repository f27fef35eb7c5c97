// The tpusim command line. Thin: parses flags and calls the runtime.
#include <cstdio>

int main() {
  std::fprintf(stderr, "tpusim: no commands yet\n");
  return 1;
}
