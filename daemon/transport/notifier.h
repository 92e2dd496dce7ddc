// Notifier: wakes every coroutine waiting on it (a condition variable for one io_context
// thread). Waiters re-check their condition after waking; because the io_context runs on a
// single thread, no notification can slip between a check and the wait that follows it.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>

namespace gridcast {

class Notifier {
 public:
  explicit Notifier(boost::asio::io_context& io) : timer_(std::make_shared<boost::asio::steady_timer>(io)) {
    timer_->expires_at(boost::asio::steady_timer::time_point::max());
  }
  // Returns after Notify() (or after `timeout` as a safety net against a missed wake-up).
  boost::asio::awaitable<void> Wait(std::chrono::milliseconds timeout = std::chrono::seconds(1)) {
    boost::asio::steady_timer guard(timer_->get_executor());
    guard.expires_after(timeout);
    // The guard's handler may already be queued when the wait ends another way, and run after
    // this Notifier is gone: it holds the timer, not the Notifier.
    guard.async_wait([timer = timer_](boost::system::error_code ec) {
      if (!ec) timer->cancel();
    });
    boost::system::error_code ec;
    co_await timer_->async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    guard.cancel();
  }
  void Notify() { timer_->cancel(); }

 private:
  std::shared_ptr<boost::asio::steady_timer> timer_;
};

}  // namespace gridcast
