// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "wcache.h"

#include <algorithm>
#include <limits>

namespace diskemu {

static constexpr uint64_t SECTOR_BYTES = 512;

void WriteCache::add(const Segment& s) {
  segs_[s.off] = s;
  by_age_.emplace(s.flush_seq, s.off);
  dirty_ += s.len;
}

std::map<uint64_t, Segment>::iterator WriteCache::erase(
    std::map<uint64_t, Segment>::iterator it) {
  by_age_.erase({it->second.flush_seq, it->second.off});
  dirty_ -= it->second.len;
  return segs_.erase(it);
}

uint64_t WriteCache::carve(uint64_t off, uint64_t len) {
  uint64_t end = off + len;
  uint64_t lowest = std::numeric_limits<uint64_t>::max();
  auto it = segs_.upper_bound(off);
  if (it != segs_.begin()) {
    --it;
  }
  while (it != segs_.end() && it->second.off < end) {
    Segment s = it->second;
    if (s.end() <= off) {
      ++it;
      continue;
    }
    lowest = std::min(lowest, s.flush_seq);
    it = erase(it);
    if (s.off < off) {
      Segment left = s;
      left.len = off - s.off;
      add(left);
    }
    if (s.end() > end) {
      Segment right = s;
      right.off = end;
      right.len = s.end() - end;
      right.buf_off = s.buf_off + (end - s.off);
      add(right);
      it = segs_.upper_bound(end);   // past the remnant just added
    }
  }
  return lowest;
}

uint64_t WriteCache::insert(uint64_t off, uint64_t len, int64_t acked,
                            Payload buf, size_t buf_off) {
  uint64_t seq = ++last_seq_;
  uint64_t replaced = carve(off, len);
  Segment s;
  s.off = off;
  s.len = len;
  s.seq = seq;
  s.flush_seq = std::min(seq, replaced);
  s.acked = acked;
  s.buf = std::move(buf);
  s.buf_off = buf_off;
  add(s);
  return seq;
}

bool WriteCache::has_through(uint64_t seq) const {
  return !by_age_.empty() && std::get<0>(*by_age_.begin()) <= seq;
}

std::vector<const Segment*> WriteCache::oldest(size_t window, uint64_t upto) const {
  std::vector<const Segment*> out;
  for (auto& k : by_age_) {
    if (out.size() >= window || std::get<0>(k) > upto) {
      break;
    }
    out.push_back(&segs_.at(std::get<1>(k)));
  }
  return out;
}

static PlatterWrite piece(const Segment& s, uint64_t off, uint64_t len) {
  PlatterWrite w;
  w.off = off;
  w.len = len;
  if (s.buf) {
    w.data = s.buf->data() + s.buf_off + (off - s.off);
    w.keep = s.buf;
  }
  return w;
}

std::vector<PlatterWrite> WriteCache::complete_destage(uint64_t off, uint64_t len,
                                                       uint64_t seq) {
  std::vector<PlatterWrite> out;
  uint64_t end = off + len;
  auto it = segs_.lower_bound(off);
  while (it != segs_.end() && it->second.off < end) {
    if (it->second.seq == seq) {
      out.push_back(piece(it->second, it->second.off, it->second.len));
      it = erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

uint64_t WriteCache::covered(uint64_t off, uint64_t len) const {
  uint64_t end = off + len, n = 0;
  auto it = segs_.upper_bound(off);
  if (it != segs_.begin()) {
    --it;
  }
  for (; it != segs_.end() && it->second.off < end; ++it) {
    uint64_t a = std::max(off, it->second.off), b = std::min(end, it->second.end());
    if (a < b) {
      n += b - a;
    }
  }
  return n;
}

std::vector<PlatterWrite> WriteCache::overlay(uint64_t off, uint64_t len) const {
  std::vector<PlatterWrite> out;
  uint64_t end = off + len;
  auto it = segs_.upper_bound(off);
  if (it != segs_.begin()) {
    --it;
  }
  for (; it != segs_.end() && it->second.off < end; ++it) {
    uint64_t a = std::max(off, it->second.off), b = std::min(end, it->second.end());
    if (a < b && it->second.buf) {
      out.push_back(piece(it->second, a, b - a));
    }
  }
  return out;
}

void WriteCache::discard(uint64_t off, uint64_t len) {
  carve(off, len);
}

std::vector<PlatterWrite> WriteCache::drain() {
  std::vector<PlatterWrite> out;
  for (auto& kv : segs_) {
    out.push_back(piece(kv.second, kv.second.off, kv.second.len));
  }
  segs_.clear();
  by_age_.clear();
  dirty_ = 0;
  return out;
}

static uint64_t mix64(uint64_t x) {
  // splitmix64 finalizer: a good bit mixer, so adjacent sectors decide
  // independently.
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool WriteCache::torn_keeps(uint64_t seed, uint64_t lba) {
  return mix64(mix64(seed) ^ lba) & 1;
}

std::vector<PlatterWrite> WriteCache::cut(uint64_t seed, bool torn) {
  std::vector<PlatterWrite> out;
  if (torn) {
    for (auto& kv : segs_) {
      const Segment& s = kv.second;
      // Sectors are absolute 512-byte units, so a tear never splits one.
      for (uint64_t lba = s.off / SECTOR_BYTES; lba * SECTOR_BYTES < s.end(); lba++) {
        uint64_t a = std::max(s.off, lba * SECTOR_BYTES);
        uint64_t b = std::min(s.end(), (lba + 1) * SECTOR_BYTES);
        if (!torn_keeps(seed, lba)) {
          continue;
        }
        if (!out.empty() && out.back().off + out.back().len == a &&
            out.back().keep == s.buf &&
            (!s.buf || out.back().data + out.back().len == s.buf->data() + s.buf_off + (a - s.off))) {
          out.back().len += b - a;    // extend a run of kept sectors
        } else {
          out.push_back(piece(s, a, b - a));
        }
      }
    }
  }
  segs_.clear();
  by_age_.clear();
  dirty_ = 0;
  return out;
}

}  // namespace diskemu
