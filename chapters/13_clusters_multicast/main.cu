// Chapter 13 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh (v0, the cluster ring, v3), more_kernels.cuh (v4, v1, v2, v5)
// and README.md; host.cuh holds the Problem and the variant list.
#include "kernels.cuh"  // first, and by its short name: an exercise copy finds its own
#include "chapters/13_clusters_multicast/more_kernels.cuh"
#include "chapters/13_clusters_multicast/host.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch13::Problem> ch;
  ch.id = "ch13_clusters_multicast";
  ch.title = "Chapter 13: clusters, distributed shared memory, TMA multicast";
  ch.min_cc_major = 9;  // clusters, DSMEM, st.async, multicast: sm_90
  ch.min_cc_minor = 0;
  tut::set_buffer_sizes(ch, 16, "; rows of 64 KiB");  // in and out; default 1 GiB
  ch.check_sizes = ch13::kCheckSizes;                  // why these: host.cuh
  ch.variants = ch13::variants();
  // The lesson: one multicast per table tile for a cluster of 4, against every block loading
  // the table itself (both one block per row, the same grid).
  ch.tour_lesson = "v3_multicast_ptx";
  ch.tour_baseline = "v0_bulk";
  ch.after_table = [](const tut::RunConfig&, cudaStream_t, const std::string&) {
    std::printf("largest cluster for the multicast kernel (256 threads, 64 KiB smem): %d "
                "portable, %d with cudaFuncAttributeNonPortableClusterSizeAllowed\n",
                ch13::max_cluster_size(ch13::broadcast_v3_multicast_ptx_kernel, false),
                ch13::max_cluster_size(ch13::broadcast_v3_multicast_ptx_kernel, true));
    return true;
  };
  return tut::run_chapter(argc, argv, ch);
}
