// The CPU kernels' thread pool (see parallel_pieces in Loops.h).
//
// Why not `#pragma omp parallel for`: an OpenMP region ends at a barrier that
// waits for every thread of the team, so one worker that the OS has not
// scheduled yet (a busy machine: other processes compiling, say) holds up the
// whole operation for a time slice -- a 100 us add took 5 ms. Here the caller
// and the workers each take the pieces of their own block (Job), then what is
// left of the others'; the caller waits only for pieces a worker has already
// started. A worker that wakes up late finds its block taken.
//
// Both sides poll for a while before they sleep: waking a sleeping thread costs
// a system call and, on a virtual machine, the host's time to give the halted
// CPU back (tens to hundreds of microseconds), about as long as a whole 1M-float
// add. And a woken worker may land on its caller's CPU (see move_off_cpu).
#include <pthread.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <algorithm>
#include <memory>
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

// Polls `done` for up to kSpinMicroseconds; true once it holds.
template <typename Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicroseconds);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    for (int i = 0; i < 16; ++i) cpu_relax();
  }
}

// The CPU the calling thread runs on; -1 where the system does not say.
int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// Moves the calling worker off `cpu`, its caller's. Linux places a woken thread on
// the waker's CPU when it takes the other CPUs for busy, as it does on a virtual
// machine whose idle CPUs the host has descheduled; the two threads then share one
// CPU (one of them ran every piece of 10 to 20 calls in a row on a 2-core VM)
// until load balancing notices, milliseconds later. Leaving `cpu` out of the
// worker's affinity for a moment moves it at once; restoring the affinity right
// after keeps the user's CPU mask (taskset, cgroups) as it was.
void move_off_cpu(int cpu) {
#if defined(__linux__)
  cpu_set_t allowed;
  if (cpu < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0 || !CPU_ISSET(cpu, &allowed)) return;
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) > 0 && sched_setaffinity(0, sizeof others, &others) == 0)
    sched_setaffinity(0, sizeof allowed, &allowed);
#else
  (void)cpu;
#endif
}

thread_local bool t_in_parallel = false;
std::atomic<bool> g_forked{false};  // a fork()ed child has no workers: it runs serially

// One participant's share of a job's pieces, [next, end): its own to take first, the
// others' to take once their own is done. On a cache line of its own.
struct alignas(64) Share {
  std::atomic<int64_t> next{0};
  int64_t end = 0;
};

// A job's pieces are shared out in contiguous blocks, one per participant (the caller is
// participant 0, worker i participant i + 1), so that a call over the same tensors as the
// call before gives each thread the same part of them, still in its cache: with one
// counter for all, pieces went to whichever thread asked first, and a 256K-float neg
// (out=) on 2 threads took 1.23 times torch's time, whose OpenMP loops split statically.
// A participant that is done takes the pieces left in the others' blocks, so a late or
// slow thread still holds nobody up.
struct Job {
  Job(void (*body_)(void*, int64_t), void* ctx_, int64_t pieces, int participants)
      : body(body_), ctx(ctx_), count(participants), shares(new Share[participants]) {
    for (int p = 0; p < participants; ++p) {
      shares[p].next.store(pieces * p / participants, std::memory_order_relaxed);
      shares[p].end = pieces * (p + 1) / participants;
    }
  }
  void (*body)(void*, int64_t);
  void* ctx;
  int count;
  std::unique_ptr<Share[]> shares;
  int caller_cpu = -1;
  // Workers inside work(): joined under Pool::mutex_ while the job is posted, left
  // without it (the caller polls the count before it sleeps on Pool::idle_).
  std::atomic<int> users{0};
  std::mutex error_mutex;
  std::exception_ptr error;
};

// Runs pieces of `job`: participant `self`'s block first, then what is left of the others'.
void work(Job& job, int self) {
  for (int k = 0; k < job.count; ++k) {
    Share& share = job.shares[(self + k) % job.count];
    for (;;) {
      const int64_t piece = share.next.fetch_add(1, std::memory_order_relaxed);
      if (piece >= share.end) break;
      try {
        job.body(job.ctx, piece);
      } catch (...) {
        std::lock_guard<std::mutex> lock(job.error_mutex);
        if (!job.error) job.error = std::current_exception();
        for (int p = 0; p < job.count; ++p)  // stop handing out pieces
          job.shares[p].next.store(job.shares[p].end, std::memory_order_relaxed);
      }
    }
  }
}

class Pool {
 public:
  explicit Pool(int workers) : workers_(workers) {
    for (int i = 0; i < workers; ++i) std::thread([this, i] { loop(i + 1); }).detach();
  }
  int workers() const { return workers_; }
  int participants() const { return workers_ + 1; }  // the caller too

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
    work(job, 0);
    t_in_parallel = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = nullptr;  // no worker joins from now on
    }
    // The workers are finishing their last pieces: usually a few microseconds.
    const auto finished = [&] { return job.users.load(std::memory_order_acquire) == 0; };
    if (!spin_until(finished)) {
      std::unique_lock<std::mutex> lock(mutex_);
      idle_.wait(lock, finished);
    }
    return true;
  }

 private:
  void loop(int self) {  // participant `self` of every job
    t_in_parallel = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    for (;;) {
      // Kernels come in quick succession: poll for a while before sleeping, so
      // that the next one finds this worker awake (no wake-up, no waiting for
      // the scheduler to give a sleeping thread its core back).
      spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
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
      job->users.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      if (job->caller_cpu >= 0 && current_cpu() == job->caller_cpu) move_off_cpu(job->caller_cpu);
      work(*job, self);
      // `job` may be gone once the count reaches 0: only the pool is touched after.
      if (job->users.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> guard(mutex_);  // the caller is polling or inside idle_.wait
        idle_.notify_all();
      }
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
  const bool serial = pieces == 1 || g_forked.load(std::memory_order_relaxed) || pool().workers() == 0;
  Job job(body, ctx, pieces, serial ? 1 : pool().participants());
  job.caller_cpu = current_cpu();
  if (serial || !pool().run(job)) {  // (run: false while another caller has the pool)
    const bool saved = t_in_parallel;
    t_in_parallel = true;
    work(job, 0);  // its own block, then every other
    t_in_parallel = saved;
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace tensorlet::cpu
