// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "stage.h"

#include <algorithm>

namespace diskemu {

void MediaCache::carve(uint64_t off, uint64_t len) {
  const uint64_t end = off + len;
  auto it = ext_.upper_bound(off);
  if (it != ext_.begin()) {
    --it;
  }
  while (it != ext_.end() && it->second.off < end) {
    Staged s = it->second;
    if (s.end() <= off) {
      ++it;
      continue;
    }
    it = ext_.erase(it);
    bytes_ -= s.len;
    if (s.off < off) {
      Staged head{s.off, off - s.off, s.seq};
      ext_[head.off] = head;
      bytes_ += head.len;
    }
    if (s.end() > end) {
      Staged tail{end, s.end() - end, s.seq};
      it = ext_.emplace(tail.off, tail).first;
      bytes_ += tail.len;
      ++it;
    }
  }
}

void MediaCache::insert(uint64_t off, uint64_t len) {
  carve(off, len);
  ext_[off] = Staged{off, len, ++seq_};
  bytes_ += len;
}

uint64_t MediaCache::covered(uint64_t off, uint64_t len) const {
  const uint64_t end = off + len;
  uint64_t n = 0;
  auto it = ext_.upper_bound(off);
  if (it != ext_.begin()) {
    --it;
  }
  for (; it != ext_.end() && it->second.off < end; ++it) {
    const Staged& s = it->second;
    if (s.end() > off) {
      n += std::min(end, s.end()) - std::max(off, s.off);
    }
  }
  return n;
}

std::vector<Staged> MediaCache::near(uint64_t head, size_t window) const {
  std::vector<Staged> v;
  if (ext_.empty() || window == 0) {
    return v;
  }
  auto after = ext_.lower_bound(head);
  auto before = after;
  // Half ahead of the arm, the other half behind it; where one side runs
  // out the other gives the rest.
  size_t ahead = 0;
  const size_t half = (window + 1) / 2;
  for (auto it = after; it != ext_.end() && ahead < half; ++it, ++ahead) {
    v.push_back(it->second);
  }
  while (before != ext_.begin() && v.size() < window) {
    --before;
    v.push_back(before->second);
  }
  for (auto it = std::next(after, ahead); it != ext_.end() && v.size() < window; ++it) {
    v.push_back(it->second);
  }
  return v;
}

void MediaCache::complete_destage(const Staged& s) {
  auto it = ext_.lower_bound(s.off);
  while (it != ext_.end() && it->second.off < s.end()) {
    if (it->second.seq == s.seq) {
      bytes_ -= it->second.len;
      it = ext_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace diskemu
