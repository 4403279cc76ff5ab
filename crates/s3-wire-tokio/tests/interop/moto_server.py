"""moto's S3 server for the tests: listens on 127.0.0.1 on a free port, prints the port,
and runs until its standard input closes, so it ends with the test process that started
it, however that one ends."""

import logging
import sys

import crc32c  # noqa: F401  (without it moto stores a CRC32 as the CRC32C: fail instead)
from moto.server import ThreadedMotoServer

logging.getLogger("werkzeug").setLevel(logging.ERROR)

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()
server.stop()
