"""Conformance: CumulusCI's `load_dataset` and `extract_dataset`, unchanged, against the emulator.

`cci` runs from its own virtual environment (see conftest.py), at its default settings: the org is
connected as `cci org connect` would store it (instance URL, refresh token, connected app), so
every task starts with a real OAuth refresh-token flow; the API version is CumulusCI's default
(the newest the org lists); the mapping's `smart` API picks REST for small steps and Bulk API 1.0
from 2,000 records up. The only accommodation is the test certificate CumulusCI trusts through
REQUESTS_CA_BUNDLE. The mapping has a lookup (Contact.AccountId) and a self-lookup
(Account.ParentId, which CumulusCI loads in a second, update pass).
"""
import json
import os
import sqlite3
import subprocess

from conftest import CLIENT_ID, CLIENT_SECRET, REFRESH_TOKEN, client_command, org_query

MAPPING = """\
Accounts:
    sf_object: Account
    fields:
        - Name
        - Industry
    lookups:
        ParentId:
            table: Account
Contacts:
    sf_object: Contact
    fields:
        - FirstName
        - LastName
        - Email
    lookups:
        AccountId:
            table: Account
"""


def dataset(accounts, parents, industry):
    """`accounts` accounts (the first `parents` without a parent, the others under one of them)
    and one contact each, as CumulusCI's SQL dataset format."""
    lines = ['CREATE TABLE "Account" (id VARCHAR(255) NOT NULL, "Name" VARCHAR(255), "Industry" VARCHAR(255), '
             '"ParentId" VARCHAR(255), PRIMARY KEY (id));']
    for index in range(1, accounts + 1):
        parent = "NULL" if index <= parents else f"'Account-{index % parents + 1}'"
        lines.append(f"INSERT INTO \"Account\" VALUES('Account-{index}','{industry} {index:04d}','{industry}',{parent});")
    lines.append('CREATE TABLE "Contact" (id VARCHAR(255) NOT NULL, "FirstName" VARCHAR(255), "LastName" VARCHAR(255), '
                 '"Email" VARCHAR(255), "AccountId" VARCHAR(255), PRIMARY KEY (id));')
    for index in range(1, accounts + 1):
        lines.append(f"INSERT INTO \"Contact\" VALUES('Contact-{index}','First{index}','{industry} Last{index}',"
                     f"'c{index}@example.com','Account-{index}');")
    return "\n".join(lines) + "\n"


def cci(project, fields, *arguments):
    """Runs `cci` in the project folder with the emulator connected as org `emu`."""
    environment = dict(os.environ)
    environment.update({
        "HOME": str(project),  # CumulusCI's keychain and logs stay in the test's folder
        "REQUESTS_CA_BUNDLE": fields["ca_bundle"],
        "CUMULUSCI_ORG_emu": json.dumps({"instance_url": fields["instance_url"], "refresh_token": REFRESH_TOKEN,
                                         "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}),
    })
    result = subprocess.run([client_command("cumulusci", "cci"), *arguments, "--org", "emu"], cwd=project,
                            env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def project(tmp_path, sql):
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    (folder / "cumulusci.yml").write_text("project:\n    name: EmulatorConformance\n")
    (folder / "mapping.yml").write_text(MAPPING)
    (folder / "dataset.sql").write_text(sql)
    return folder


def check_loaded(fields, industry, accounts, parents):
    """Every account once with its parent, every contact under its own account."""
    loaded = org_query(fields, f"SELECT Id, Name, Parent.Name FROM Account WHERE Industry = '{industry}'")
    assert len(loaded) == accounts and len({record["Name"] for record in loaded}) == accounts
    for record in loaded:
        index = int(record["Name"].split()[-1])
        expected = None if index <= parents else f"{industry} {index % parents + 1:04d}"
        assert (record["Parent"] or {}).get("Name") == expected, record
    contacts = org_query(fields, f"SELECT LastName, Account.Name FROM Contact WHERE Account.Industry = '{industry}'")
    assert len(contacts) == accounts
    for contact in contacts:
        index = int(contact["LastName"].split("Last")[-1])
        assert contact["Account"]["Name"] == f"{industry} {index:04d}", contact


def check_extracted(path, industry, accounts, parents):
    """The extracted dataset keeps every record of `industry` and its links, under new ids."""
    database = sqlite3.connect(":memory:")
    database.executescript(path.read_text())
    rows = database.execute('SELECT a.Name, p.Name FROM Account a LEFT JOIN Account p ON p.id = a.ParentId '
                            'WHERE a.Industry = ?', (industry,)).fetchall()
    assert len(rows) == accounts
    for name, parent in rows:
        index = int(name.split()[-1])
        assert parent == (None if index <= parents else f"{industry} {index % parents + 1:04d}")
    contacts = database.execute('SELECT c.LastName, a.Name FROM Contact c JOIN Account a ON a.id = c.AccountId '
                                'WHERE a.Industry = ?', (industry,)).fetchall()
    assert len(contacts) == accounts
    assert all(name == f"{industry} {int(last.split('Last')[-1]):04d}" for last, name in contacts)


def test_load_and_extract_through_rest(tls_emulator, tmp_path):
    folder = project(tmp_path, dataset(12, 3, "Apparel"))
    output = cci(folder, tls_emulator, "task", "run", "load_dataset", "-o", "mapping", "mapping.yml",
                 "-o", "sql_path", "dataset.sql")
    assert "using smart" in output and "Uploading batch" not in output  # REST below 2,000 records
    check_loaded(tls_emulator, "Apparel", 12, 3)
    cci(folder, tls_emulator, "task", "run", "extract_dataset", "-o", "mapping", "mapping.yml",
        "-o", "sql_path", "extracted.sql")
    check_extracted(folder / "extracted.sql", "Apparel", 12, 3)


def test_load_and_extract_through_bulk_v1(tls_emulator, tmp_path):
    folder = project(tmp_path, dataset(2500, 40, "Shipping"))
    output = cci(folder, tls_emulator, "task", "run", "load_dataset", "-o", "mapping", "mapping.yml",
                 "-o", "sql_path", "dataset.sql")
    assert "Uploading batch" in output  # Bulk API 1.0 from 2,000 records
    check_loaded(tls_emulator, "Shipping", 2500, 40)
    output = cci(folder, tls_emulator, "task", "run", "extract_dataset", "-o", "mapping", "mapping.yml",
                 "-o", "sql_path", "extracted.sql")
    assert "Created Bulk API query job" in output
    check_extracted(folder / "extracted.sql", "Shipping", 2500, 40)
