// Chapter 10: trivially copyable types. The lesson is in kernels.cuh, particle.cuh and
// README.md; the Problem, the variant registry and the sizes in host.cuh.
#include "host.cuh"

int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch10::chapter()); }
