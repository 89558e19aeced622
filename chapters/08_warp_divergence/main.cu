// Chapter 08: warp divergence around memcpy_async. The lesson is in kernels.cuh and README.md;
// the Problem, the variant registry and the sizes in host.cuh.
#include "host.cuh"

int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch08::chapter()); }
