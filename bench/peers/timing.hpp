// Timing policy shared by the `strata bench` commands.
#pragma once
#include <chrono>
#include <thread>

namespace strata::bench {

// With several threads, OpenBLAS's and OpenMP's workers busy-wait for a while after each call
// and take the second core from whichever library runs next (measured: strata's 2-thread
// 256^3 GEMM fell from ~125 to 15-70 GFLOPS after a peer). Multi-threaded timings therefore
// run one library at a time, each block starting after this pause and an untimed call that
// wakes that library's own threads.
inline void let_peer_threads_park() { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

}  // namespace strata::bench
