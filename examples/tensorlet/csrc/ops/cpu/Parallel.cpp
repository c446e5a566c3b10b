// The CPU kernels' thread pool (see parallel_pieces in Loops.h).
//
// Why not `#pragma omp parallel for`: an OpenMP region ends at a barrier that
// waits for every thread of the team, so one worker that the OS has not
// scheduled yet (a busy machine: other processes compiling, say) holds up the
// whole operation for a time slice -- a 100 us add took 5 ms. Here the caller
// and the workers claim pieces from one counter; the caller does whatever is
// left and then waits only for pieces a worker has already started. A worker
// that wakes up late finds nothing to do.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <algorithm>
#include <thread>

#include "ops/cpu/Loops.h"

namespace tensorlet::cpu {
namespace {

constexpr int kSpinMicroseconds = 200;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

thread_local bool t_in_parallel = false;
std::atomic<bool> g_forked{false};  // a fork()ed child has no workers: it runs serially

struct Job {
  void (*body)(void*, int64_t) = nullptr;
  void* ctx = nullptr;
  int64_t pieces = 0;
  std::atomic<int64_t> next{0};
  int users = 0;  // workers inside work(); guarded by Pool::mutex_
  std::mutex error_mutex;
  std::exception_ptr error;
};

void work(Job& job) {
  for (;;) {
    int64_t piece = job.next.fetch_add(1, std::memory_order_relaxed);
    if (piece >= job.pieces) return;
    try {
      job.body(job.ctx, piece);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
      job.next.store(job.pieces, std::memory_order_relaxed);  // stop handing out pieces
    }
  }
}

class Pool {
 public:
  explicit Pool(int workers) : workers_(workers) {
    for (int i = 0; i < workers; ++i) std::thread([this] { loop(); }).detach();
  }
  int workers() const { return workers_; }

  // False when another caller is using the pool (then the caller runs serially).
  bool run(Job& job) {
    bool sleepers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (job_ != nullptr) return false;
      job_ = &job;
      generation_.fetch_add(1, std::memory_order_release);
      sleepers = sleeping_ > 0;
    }
    if (sleepers) wake_.notify_all();
    t_in_parallel = true;
    work(job);
    t_in_parallel = false;
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = nullptr;  // no worker joins from now on
    idle_.wait(lock, [&] { return job.users == 0; });
    return true;
  }

 private:
  void loop() {
    t_in_parallel = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    for (;;) {
      // Kernels come in quick succession: poll for a while before sleeping, so
      // that the next one finds this worker awake (no wake-up, no waiting for
      // the scheduler to give a sleeping thread its core back).
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicroseconds);
      while (generation_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until) {
        for (int i = 0; i < 64; ++i) cpu_relax();
      }
      lock.lock();
      ++sleeping_;
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_relaxed) != seen; });
      --sleeping_;
      seen = generation_.load(std::memory_order_relaxed);
      Job* job = job_;
      if (job == nullptr) {  // woke up after the caller had finished
        lock.unlock();
        continue;
      }
      ++job->users;
      lock.unlock();
      work(*job);
      lock.lock();
      if (--job->users == 0) idle_.notify_all();
      lock.unlock();
    }
  }

  const int workers_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  Job* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // written under mutex_, polled without it
  int sleeping_ = 0;
};

Pool& pool() {
  // Leaked on purpose: detached workers wait on its condition variable until exit.
  static Pool* p = [] {
    pthread_atfork(nullptr, nullptr, [] { g_forked.store(true); });
    return new Pool(std::max(0, max_threads() - 1));
  }();
  return *p;
}

}  // namespace

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();  // OMP_NUM_THREADS, as before
#else
  static const int n = [] {
    unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }();
  return n;
#endif
}

bool in_parallel_region() {
#ifdef _OPENMP
  if (omp_in_parallel()) return true;
#endif
  return t_in_parallel;
}

void parallel_pieces(int64_t pieces, void (*body)(void*, int64_t), void* ctx) {
  if (pieces <= 0) return;
  Job job;
  job.body = body;
  job.ctx = ctx;
  job.pieces = pieces;
  if (pieces == 1 || g_forked.load(std::memory_order_relaxed) || pool().workers() == 0 || !pool().run(job)) {
    const bool saved = t_in_parallel;
    t_in_parallel = true;
    work(job);
    t_in_parallel = saved;
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace tensorlet::cpu
