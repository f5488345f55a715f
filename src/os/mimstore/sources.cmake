# mimstore's sources, included from Ceph's src/os/CMakeLists.txt by the
# patch series (cmake/patches). Paths are relative to src/os.
file(GLOB mimstore_core_srcs CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/core/*.cc)
set(mimstore_srcs
  mimstore/Checksums.cc
  mimstore/Collections.cc
  mimstore/CrashRocksEnv.cc
  mimstore/JournalDevice.cc
  mimstore/JournalWriter.cc
  mimstore/MIMAdmin.cc
  mimstore/MIMCollOps.cc
  mimstore/MIMConfig.cc
  mimstore/MIMFlush.cc
  mimstore/MIMFsck.cc
  mimstore/MIMJournal.cc
  mimstore/MIMJournalData.cc
  mimstore/MIMJournalTools.cc
  mimstore/MIMMergeControl.cc
  mimstore/MIMMount.cc
  mimstore/MIMOmapOps.cc
  mimstore/MIMOps.cc
  mimstore/MIMPerf.cc
  mimstore/MIMRead.cc
  mimstore/MIMReplay.cc
  mimstore/MIMStatus.cc
  mimstore/MIMStore.cc
  mimstore/ObjectFiles.cc
  mimstore/ObjectKey.cc
  mimstore/ObjectName.cc
  mimstore/OmapMigrate.cc
  mimstore/OmapStore.cc
  mimstore/ReplayGuards.cc
  mimstore/Sequencer.cc
  mimstore/TxnCodec.cc
  mimstore/WrittenBack.cc
  ${mimstore_core_srcs})
# core/ headers are included as "core/...".
include_directories(${CMAKE_CURRENT_LIST_DIR})
