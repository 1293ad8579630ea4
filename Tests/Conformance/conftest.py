"""Shared fixtures of the client conformance tests: `pipeline emulator` over plain http on a free
port, or over https with a throwaway test certificate (for clients that always build https URLs
from an instance URL and take no transport of ours), and the command-line clients installed in
their own virtual environments.

PIPELINE_BIN names the binary (default .build/debug/pipeline). CONFORMANCE_VENVS names the folder
holding one virtual environment per command-line client (default .build/conformance; `.ci/run`
creates them); with CONFORMANCE_REQUIRE_ALL=1 (CI) a missing client fails instead of skipping.
"""
import datetime
import ipaddress
import os
import random
import subprocess
from contextlib import contextmanager

import pytest
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("PIPELINE_BIN", os.path.join(ROOT, ".build", "debug", "pipeline"))
SEED = os.path.join(ROOT, "samples", "org", "seed.json")
VENVS = os.environ.get("CONFORMANCE_VENVS", os.path.join(ROOT, ".build", "conformance"))

# The sample seed's user and connected app (samples/org/seed.json).
USERNAME = "demo@syncpipeline.dev"
PASSWORD = "demo-password"
CLIENT_ID = "demo-client"
CLIENT_SECRET = "demo-secret"
REFRESH_TOKEN = "demo-refresh-token"


@contextmanager
def running_emulator(*arguments):
    """`pipeline emulator` with the sample seed; yields its startup line's fields."""
    process = subprocess.Popen([BINARY, "emulator", "--seed", SEED, *arguments],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline().strip()
        if not line:
            raise RuntimeError("the emulator did not start: " + process.stderr.read())
        yield dict(part.split("=", 1) for part in line.split(" "))
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture()
def emulator():
    """The emulator over plain http on a free loopback port."""
    with running_emulator("--port", "0") as fields:
        yield fields


def write_test_certificate(folder, address):
    """A self-signed certificate for `address` (and localhost); returns (certificate, key) paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "SyncPipeline emulator test certificate")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                    x509.IPAddress(ipaddress.ip_address(address))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256()))
    certificate_path = os.path.join(folder, "emulator-cert.pem")
    key_path = os.path.join(folder, "emulator-key.pem")
    with open(certificate_path, "wb") as file:
        file.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as file:
        file.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    return certificate_path, key_path


@pytest.fixture()
def tls_emulator(tmp_path):
    """The emulator over https on port 443 of a loopback address of its own (some clients drop the
    port of an instance URL, as every real org serves 443), with a test certificate the clients
    trust through REQUESTS_CA_BUNDLE. Yields its fields plus `ca_bundle`."""
    if os.geteuid() != 0:
        pytest.skip("port 443 needs root (CI runs as root)")
    address = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(1, 254)}"
    certificate, key = write_test_certificate(str(tmp_path), address)
    with running_emulator("--host", address, "--port", "443", "--tls-cert", certificate, "--tls-key", key) as fields:
        fields["ca_bundle"] = certificate
        fields["instance_url"] = f"https://{address}"
        yield fields


def client_command(venv, command):
    """The path of `command` in the client's virtual environment under CONFORMANCE_VENVS."""
    path = os.path.join(VENVS, venv, "bin", command)
    if not os.path.exists(path):
        message = f"{command} is not installed in {os.path.join(VENVS, venv)} (see .ci/run)"
        if os.environ.get("CONFORMANCE_REQUIRE_ALL") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def org_query(fields, soql):
    """Every record of `soql`, read from the emulator with plain requests (the test's own view)."""
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + fields["access_token"]
    verify = fields.get("ca_bundle", True)  # per request: REQUESTS_CA_BUNDLE would win over session.verify
    url = fields["instance_url"] + "/services/data/v62.0/query"
    answer = session.get(url, params={"q": soql}, verify=verify).json()
    records = answer["records"]
    while not answer["done"]:
        answer = session.get(fields["instance_url"] + answer["nextRecordsUrl"], verify=verify).json()
        records += answer["records"]
    return records
