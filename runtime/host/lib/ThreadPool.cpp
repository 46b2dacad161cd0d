// The host datapaths' threads (HostRunner.h, runConcurrently).
#include "purlin/host/HostRunner.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace purlin {
namespace host {
namespace {
/// Threads kept between launches: a launch runs every rank x lane at once
/// (they wait on each other), so the pool grows to the largest launch's
/// count; starting threads anew per launch cost more than the test grids'
/// small collectives themselves. Workers are detached: they sleep when idle
/// and end with the process.
class Pool {
public:
  /// Runs jobs[0..n) concurrently and returns when all have finished.
  void run(std::vector<std::function<void()>> &jobs) {
    std::unique_lock<std::mutex> lk(mu_);
    while (idle_ < jobs.size() + queue_.size()) {
      std::thread([this] { work(); }).detach();
      ++idle_;
    }
    size_t left = jobs.size();
    std::condition_variable done;
    for (auto &j : jobs)
      queue_.push_back([&j, &left, &done, this] {
        j();
        std::lock_guard<std::mutex> g(mu_);
        if (--left == 0)
          done.notify_one();
      });
    ready_.notify_all();
    done.wait(lk, [&] { return left == 0; });
  }

private:
  void work() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      ready_.wait(lk, [&] { return !queue_.empty(); });
      auto job = std::move(queue_.front());
      queue_.pop_front();
      --idle_;
      lk.unlock();
      job();
      lk.lock();
      ++idle_;
    }
  }
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  size_t idle_ = 0; // workers waiting for a job (or about to)
};
} // namespace

void runConcurrently(std::vector<std::function<void()>> &jobs) {
  static Pool *p = new Pool; // never destroyed: detached workers use it
  p->run(jobs);
}

} // namespace host
} // namespace purlin
