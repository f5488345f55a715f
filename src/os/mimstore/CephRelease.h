// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: CEPH_RELEASE (18 Reef, 20 Tentacle) for the few places the
 * ObjectStore interface differs. Reef defines it in ceph_ver.h, Tentacle
 * in ceph_release.h (both generated into the build's src/include).
 */
#pragma once

#if __has_include("ceph_release.h")
#include "ceph_release.h"
#else
#include "ceph_ver.h"
#endif

#ifndef CEPH_RELEASE
#error "mimstore: neither ceph_release.h nor ceph_ver.h defines CEPH_RELEASE"
#endif
