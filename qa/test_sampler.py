#!/usr/bin/python3
"""Unit tests of qa/sampler.py's admin-socket reader (Ceph-free: a socket
server in the test answers as a Ceph daemon's admin socket does).

Run: /usr/bin/python3 -m unittest test_sampler   (from qa/)
"""

import json
import os
import socket
import struct
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import sampler  # noqa: E402


class AdminSocketTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "osd.0.asok")
        self.commands = []

    def tearDown(self):
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)

    def serve(self, answer):
        """Answer one connection: read the command up to its NUL, reply with
        a 4-byte big-endian length and `answer` (bytes)."""
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(self.path)
        srv.listen(1)

        def run():
            c, _ = srv.accept()
            with c:
                cmd = b""
                while not cmd.endswith(b"\0"):
                    cmd += c.recv(1)
                self.commands.append(json.loads(cmd[:-1]))
                c.sendall(struct.pack(">I", len(answer)) + answer)
            srv.close()
        t = threading.Thread(target=run)
        t.start()
        return t

    def test_reads_and_flattens_the_logger_section(self):
        body = {"mimstore": {"syncs": 7, "journal_used_bytes": 123,
                             "sync_lat": {"avgcount": 3, "sum": 1.5, "avgtime": 0.5},
                             "histogram": {"buckets": [1, 2]}}}
        t = self.serve(json.dumps(body).encode())
        got = sampler.perf_section(self.path, "mimstore", 2.0)
        t.join()
        self.assertEqual(self.commands, [{"prefix": "perf dump", "logger": "mimstore"}])
        self.assertEqual(got, {"syncs": 7, "journal_used_bytes": 123, "sync_lat": [3, 1.5]})

    def test_a_daemon_without_the_section(self):
        t = self.serve(json.dumps({}).encode())
        self.assertIsNone(sampler.perf_section(self.path, "mimstore", 2.0))
        t.join()

    def test_a_short_answer(self):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(self.path)
        srv.listen(1)

        def run():
            c, _ = srv.accept()
            c.recv(4096)
            c.sendall(struct.pack(">I", 100) + b'{"mims')   # then closes
            c.close()
            srv.close()
        t = threading.Thread(target=run)
        t.start()
        self.assertIsNone(sampler.perf_section(self.path, "mimstore", 2.0))
        t.join()

    def test_no_daemon(self):
        self.assertIsNone(sampler.perf_section(self.path, "mimstore", 0.2))


if __name__ == "__main__":
    unittest.main()
