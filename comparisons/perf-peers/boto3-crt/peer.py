"""boto3 with the AWS CRT (awscrt): the boto3 peer (../boto3/peer.py) whose managed
transfers (upload, download, tasks) go through s3transfer's CRTTransferManager on an
awscrt S3Client, the transfer client boto3 picks with
TransferConfig(preferred_transfer_client="crt"). See README.md for why the pieces are
made here rather than by boto3.s3.transfer.create_transfer_manager.
"""

import os
import sys
import threading

import botocore.session
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from s3transfer.crt import (
    BotocoreCRTCredentialsWrapper,
    BotocoreCRTRequestSerializer,
    CRTTransferManager,
    create_s3_crt_client,
)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))
import perfpeer  # noqa: E402

Boto3 = perfpeer.load_peer("boto3").Boto3


class Boto3Crt(Boto3):
    def __init__(self, args, pool=10):
        super().__init__(args, pool)
        # What boto3.crt.create_crt_transfer_manager makes, with the endpoint and CA given.
        credentials = BotocoreCRTCredentialsWrapper(self.s3._get_credentials())
        self.crt = create_s3_crt_client(
            perfpeer.REGION,
            crt_credentials_provider=credentials.to_crt_credentials_provider(),
            use_ssl=args.endpoint.startswith("https:"),
            verify=args.ca_file or None,
        )
        self.serializer = BotocoreCRTRequestSerializer(
            botocore.session.Session(),
            {
                "region_name": perfpeer.REGION,
                "endpoint_url": args.endpoint,
                "config": Config(s3={"addressing_style": "path"}),
            },
        )

    def transfer_manager(self, config):
        return CRTTransferManager(self.crt, self.serializer, config=config)

    def transfer_config(self, part_size, concurrency):
        if not part_size:
            return TransferConfig(preferred_transfer_client="crt")
        return TransferConfig(
            preferred_transfer_client="crt",
            multipart_threshold=part_size,
            multipart_chunksize=part_size,
            max_concurrency=concurrency,
        )

    def upload(self, path, key, part_size, concurrency):
        with self.transfer_manager(self.transfer_config(part_size, concurrency)) as tm:
            tm.upload(path, perfpeer.BUCKET, key).result()

    def download(self, key, path, size):
        with self.transfer_manager(self.transfer_config(0, 0)) as tm:
            tm.download(perfpeer.BUCKET, key, path).result()

    def tasks(self, jobs, concurrency):
        # The CRT's own settings (its connections follow its throughput target); at most
        # --concurrency transfers in flight (CRTTransferManager alone admits 128).
        super().tasks(jobs, concurrency, config=self.transfer_config(0, 0),
                      slots=threading.Semaphore(concurrency))


if __name__ == "__main__":
    perfpeer.main(Boto3Crt)
