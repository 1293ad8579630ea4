"""Conformance: amaxa's load and extract, unchanged, against the emulator.

`amaxa` runs from its own virtual environment (see conftest.py) at its default API version (52.0).
It reads records through REST and Bulk API 1.0 queries and loads through Bulk API 1.0 jobs
(salesforce-bulk), resolving a lookup (Contact.AccountId) and a self-lookup (Account.ParentId,
which it sets in a second pass) to the ids the org gave. amaxa connects to a Bulk API host without
a port, as every real org serves 443: the emulator listens on 443 of a loopback address of its own,
with a test certificate amaxa trusts through REQUESTS_CA_BUNDLE — nothing else stands between them.
It logs in with an access token and instance URL, one of its documented credential forms.
"""
import csv
import os
import subprocess

from conftest import client_command, org_query

OPERATION = """\
version: 2
operation:
    - sobject: Account
      fields: [Name, Industry, ParentId]
      extract:
          query: "Industry = '{industry}'"
    - sobject: Contact
      fields: [FirstName, LastName, Email, AccountId]
      extract:
          descendents: True
"""


def amaxa(folder, fields, *arguments):
    (folder / "credentials.yml").write_text(
        f"version: 1\ncredentials:\n    access-token: \"{fields['access_token']}\"\n"
        f"    instance-url: \"{fields['instance_url']}\"\n")
    environment = dict(os.environ, REQUESTS_CA_BUNDLE=fields["ca_bundle"])
    result = subprocess.run([client_command("amaxa", "amaxa"), "-c", "credentials.yml", *arguments], cwd=folder,
                            env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def write_csv(path, header, rows):
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(rows)


def read_csv(path):
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def test_load_then_extract(tls_emulator, tmp_path):
    industry, count, parents = "Consulting", 60, 6
    load = tmp_path / "load"
    load.mkdir()
    (load / "operation.yml").write_text(OPERATION.format(industry=industry))
    # Source-org ids, as an extract from another org would have them; parents come after some children.
    account_ids = [f"001A0000{index:07d}AAA" for index in range(count)]
    write_csv(load / "Account.csv", ["Id", "Name", "Industry", "ParentId"], [
        [account_ids[index], f"{industry} {index:03d}", industry, "" if index >= count - parents else account_ids[count - 1 - index % parents]]
        for index in range(count)])
    write_csv(load / "Contact.csv", ["Id", "FirstName", "LastName", "Email", "AccountId"], [
        [f"003A0000{index:07d}AAA", f"First{index}", f"Last{index}", f"c{index}@example.com", account_ids[index]]
        for index in range(count)])
    amaxa(load, tls_emulator, "-l", "operation.yml")

    loaded = org_query(tls_emulator, f"SELECT Id, Name, Parent.Name FROM Account WHERE Industry = '{industry}'")
    assert len(loaded) == count and len({record["Name"] for record in loaded}) == count
    for record in loaded:
        index = int(record["Name"].split()[-1])
        expected = None if index >= count - parents else f"{industry} {count - 1 - index % parents:03d}"
        assert (record["Parent"] or {}).get("Name") == expected, record
    contacts = org_query(tls_emulator, f"SELECT LastName, Account.Name FROM Contact WHERE Account.Industry = '{industry}'")
    assert sorted((c["LastName"], c["Account"]["Name"]) for c in contacts) == sorted(
        (f"Last{index}", f"{industry} {index:03d}") for index in range(count))

    extract = tmp_path / "extract"
    extract.mkdir()
    (extract / "operation.yml").write_text(OPERATION.format(industry=industry))
    amaxa(extract, tls_emulator, "operation.yml")
    accounts = read_csv(extract / "Account.csv")
    by_id = {row["Id"]: row for row in accounts}
    assert len(accounts) == count and {row["Id"] for row in accounts} == {record["Id"] for record in loaded}
    for row in accounts:
        index = int(row["Name"].split()[-1])
        parent = by_id.get(row["ParentId"])
        assert (parent["Name"] if parent else None) == (None if index >= count - parents else f"{industry} {count - 1 - index % parents:03d}")
    extracted_contacts = read_csv(extract / "Contact.csv")
    assert len(extracted_contacts) == count
    assert all(by_id[row["AccountId"]]["Name"] == f"{industry} {int(row['LastName'][4:]):03d}" for row in extracted_contacts)
