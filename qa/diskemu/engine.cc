// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "engine.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace diskemu {

ns_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<ns_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct DiskEngine::Io {
  HostReq req;
  Callback cb = nullptr;
  void* ctx = nullptr;
  std::vector<char> rbuf;
};

DiskEngine::DiskEngine(const EngineConfig& cfg)
    : cfg_(cfg), drive_(cfg.spec, cfg.size, cfg.drive) {
  fast_ = cfg.fast;
}

DiskEngine::~DiskEngine() { stop(); }

bool DiskEngine::start(std::string* err) {
  if (!thin_.open(cfg_.backing, cfg_.size, err)) {
    return false;
  }
  if (!cfg_.trace.empty()) {
    trace_ = fopen(cfg_.trace.c_str(), "w");
    if (!trace_) {
      *err = "cannot write trace " + cfg_.trace;
      return false;
    }
    fprintf(trace_, "t_us,op,offset,len\n");
  }
  started_ = now_ns();
  thread_ = std::thread(&DiskEngine::dispatcher, this);
  return true;
}

void DiskEngine::stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  std::lock_guard<std::mutex> l(mu_);
  if (trace_) {
    fclose(trace_);
    trace_ = nullptr;
  }
}

void DiskEngine::answer(Io* io) {
  // A read answers with its bytes, a write with its length.
  size_t n = io->req.op == OpKind::READ ? io->rbuf.size() : io->req.len;
  io->cb(io->ctx, io->req.err, io->rbuf.data(), n);
  delete io;
}

void DiskEngine::trace_locked(const Io* io) {
  if (trace_) {
    fprintf(trace_, "%.3f,%s,%llu,%llu\n", (io->req.arrival - started_) / 1e3,
            op_name(io->req.op), (unsigned long long)io->req.off,
            (unsigned long long)io->req.len);
  }
}

void DiskEngine::submit(Io* io) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!drive_.failed()) {
      io->req.user = io;
      trace_locked(io);
      drive_.submit(&io->req);
      cv_.notify_one();
      return;
    }
  }
  io->req.err = EIO;
  answer(io);
}

void DiskEngine::read(uint64_t off, size_t len, Callback cb, void* ctx) {
  ns_t t = now_ns();
  if (off >= cfg_.size) {
    cb(ctx, 0, nullptr, 0);
    return;
  }
  len = std::min<uint64_t>(len, cfg_.size - off);
  Io* io = new Io;
  io->req.op = OpKind::READ;
  io->req.off = off;
  io->req.len = len;
  io->req.arrival = t;
  io->cb = cb;
  io->ctx = ctx;
  io->rbuf.resize(len);
  // The overlay is taken before the file is read: a destage that lands in
  // between is then in both, never in neither.
  std::vector<PlatterWrite> ov;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (drive_.failed()) {
      io->req.err = EIO;
    } else {
      ov = drive_.overlay(off, len);
    }
  }
  uint64_t covered = 0;
  for (auto& w : ov) {
    covered += w.len;
  }
  if (!io->req.err && covered < len && thin_.read(off, io->rbuf.data(), len) < 0) {
    io->req.err = EIO;
  }
  for (auto& w : ov) {
    std::copy(w.data, w.data + w.len, io->rbuf.begin() + (w.off - off));
  }
  if (io->req.err || fast_) {
    if (!io->req.err) {
      fast_ops_++;
    }
    answer(io);
    return;
  }
  submit(io);
}

void DiskEngine::write(uint64_t off, const char* data, size_t len, Callback cb,
                       void* ctx) {
  ns_t t = now_ns();
  if (off + len > cfg_.size) {
    cb(ctx, ENOSPC, nullptr, 0);
    return;
  }
  Io* io = new Io;
  io->req.op = OpKind::WRITE;
  io->req.off = off;
  io->req.len = len;
  io->req.arrival = t;
  io->cb = cb;
  io->ctx = ctx;
  if (fast_) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (drive_.failed()) {
        io->req.err = EIO;
      } else {
        drive_.discard(off, len);   // no older cached data may land later
      }
    }
    if (!io->req.err && thin_.write(off, data, len) < 0) {
      io->req.err = EIO;
    }
    fast_ops_++;
    answer(io);
    return;
  }
  if (drive_.write_through(len)) {
    // Data goes to the file now; the caller hears back when the emulated
    // media write is done.
    if (thin_.write(off, data, len) < 0) {
      io->req.err = EIO;
      answer(io);
      return;
    }
  } else {
    io->req.data = std::make_shared<const std::vector<char>>(data, data + len);
  }
  submit(io);
}

void DiskEngine::flush(Callback cb, void* ctx) {
  ns_t t = now_ns();
  if (ignore_flush_ && !fast_) {
    flushes_ignored_++;
  }
  if (fast_ || ignore_flush_) {
    std::unique_lock<std::mutex> l(mu_);
    int err = drive_.failed() ? EIO : 0;
    l.unlock();
    cb(ctx, err, nullptr, 0);
    return;
  }
  Io* io = new Io;
  io->req.op = OpKind::FLUSH;
  io->req.arrival = t;
  io->cb = cb;
  io->ctx = ctx;
  submit(io);
}

int DiskEngine::discard(uint64_t off, uint64_t len) {
  if (off >= cfg_.size) {
    return 0;
  }
  len = std::min<uint64_t>(len, cfg_.size - off);
  std::lock_guard<std::mutex> l(mu_);
  if (drive_.failed()) {
    return -EIO;
  }
  drive_.discard(off, len);
  return thin_.punch(off, len);
}

void DiskEngine::dispatcher() {
  // Sleep to the microsecond, not to the default 50 us timer slack.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  std::unique_lock<std::mutex> l(mu_);
  std::vector<Action> inflight;
  std::vector<HostReq*> done;
  std::vector<PlatterWrite> platter;
  while (!stop_) {
    Action a;
    while (drive_.plan(&a, now_ns())) {
      inflight.push_back(a);
    }
    if (inflight.empty()) {
      const ns_t wake = drive_.wake_at();
      if (wake == std::numeric_limits<ns_t>::max() || wake <= now_ns()) {
        // (a destage due now that plan() did not start: wait for news)
        cv_.wait(l);
      } else {
        cv_.wait_until(l, std::chrono::steady_clock::time_point(
                              std::chrono::nanoseconds(wake)));
      }
      continue;
    }
    auto first = std::min_element(inflight.begin(), inflight.end(),
                                  [](const Action& x, const Action& y) { return x.end < y.end; });
    if (first->end > now_ns()) {
      // A new request may start on an idle resource before then: re-plan
      // on every wake-up.
      cv_.wait_until(l, std::chrono::steady_clock::time_point(
                            std::chrono::nanoseconds(first->end)));
      continue;
    }
    Action f = *first;
    inflight.erase(first);
    drive_.finish(f, &done, &platter);
    for (auto& w : platter) {
      if (w.data) {
        thin_.write(w.off, w.data, w.len);
      }
    }
    platter.clear();
    if (!done.empty()) {
      l.unlock();
      for (HostReq* r : done) {
        answer(static_cast<Io*>(r->user));
      }
      l.lock();
      done.clear();
    }
  }
}

std::string DiskEngine::cut(uint64_t seed, bool torn) {
  std::vector<HostReq*> failed;
  std::vector<PlatterWrite> platter;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (drive_.failed()) {
      return "disk " + cfg_.name + " is already cut";
    }
    drive_.cut(seed, torn, &failed, &platter);
    for (auto& w : platter) {
      if (w.data) {
        thin_.write(w.off, w.data, w.len);
      }
    }
    cuts_++;
    if (trace_) {
      fflush(trace_);
    }
  }
  cv_.notify_all();
  for (HostReq* r : failed) {
    answer(static_cast<Io*>(r->user));
  }
  return "";
}

std::string DiskEngine::restore() {
  std::lock_guard<std::mutex> l(mu_);
  if (!drive_.failed()) {
    return "disk " + cfg_.name + " is not cut";
  }
  drive_.restore();
  return "";
}

void DiskEngine::set_fast(bool on) {
  std::lock_guard<std::mutex> l(mu_);
  if (on && !fast_) {
    for (auto& w : drive_.drain()) {   // dirty data goes out uncharged
      if (w.data) {
        thin_.write(w.off, w.data, w.len);
      }
    }
  }
  fast_ = on;
}

void DiskEngine::set_idle_destage(bool on) {
  {
    std::lock_guard<std::mutex> l(mu_);
    drive_.set_idle_destage(on);
  }
  cv_.notify_all();   // the dispatcher may have destaging to start
}

std::string DiskEngine::stats_json() {
  std::lock_guard<std::mutex> l(mu_);
  if (trace_) {
    fflush(trace_);
  }
  std::string s = drive_.stats_json(cfg_.name);
  char b[512];
  snprintf(b, sizeof b,
           ", \"fast\": %s, \"fast_ops\": %llu, \"cuts\": %llu, \"uptime_s\": %.3f, "
           "\"flush\": \"%s\", \"flushes_ignored\": %llu, "
           "\"backing\": {\"allocated_bytes\": %llu, \"written_bytes\": %llu, "
           "\"punched_bytes\": %llu}}",
           fast_ ? "true" : "false", (unsigned long long)fast_ops_.load(),
           (unsigned long long)cuts_, (now_ns() - started_) / 1e9,
           ignore_flush_ ? "ignore" : "obey",
           (unsigned long long)flushes_ignored_.load(),
           (unsigned long long)thin_.allocated(),
           (unsigned long long)thin_.bytes_written(),
           (unsigned long long)thin_.bytes_punched());
  s.pop_back();   // the closing brace
  return s + b;
}

}  // namespace diskemu
