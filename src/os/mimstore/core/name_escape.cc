// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "core/name_escape.h"

namespace mim {

namespace {

bool is_plain(unsigned char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '-';
}

int hex_value(char c)
{
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;  // lower case is never emitted, so it is malformed
}

}  // namespace

void escape_component(std::string_view in, std::string* out)
{
  static const char HEX[] = "0123456789ABCDEF";
  out->reserve(out->size() + in.size());
  for (unsigned char c : in) {
    if (is_plain(c)) {
      out->push_back(static_cast<char>(c));
    } else {
      out->push_back('%');
      out->push_back(HEX[c >> 4]);
      out->push_back(HEX[c & 15]);
    }
  }
}

bool unescape_component(std::string_view in, std::string* out)
{
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    unsigned char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) {
        return false;
      }
      int hi = hex_value(in[i + 1]);
      int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) {
        return false;
      }
      unsigned char v = static_cast<unsigned char>(hi << 4 | lo);
      if (is_plain(v)) {
        return false;  // escape never encodes a plain byte: not canonical
      }
      out->push_back(static_cast<char>(v));
      i += 2;
    } else if (is_plain(c)) {
      out->push_back(static_cast<char>(c));
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace mim
