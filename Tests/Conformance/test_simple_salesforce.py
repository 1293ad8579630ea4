"""Conformance: the unchanged simple-salesforce client against the org emulator.

Starts `pipeline emulator` on a free port with the sample seed and drives it through
simple-salesforce's public API. The only accommodation is the transport: simple-salesforce always
builds https:// URLs, so the session downgrades them to http:// for the loopback emulator (the
approach documented in shared/reference/salesforce-rest.md §9). Run with pytest; PIPELINE_BIN
names the binary (default .build/debug/pipeline).
"""
import csv
import io

import pytest
import requests
from simple_salesforce import Salesforce
from simple_salesforce.exceptions import SalesforceAuthenticationFailed, SalesforceMalformedRequest, SalesforceResourceNotFound

from conftest import CLIENT_ID, CLIENT_SECRET, PASSWORD, USERNAME


class Downgrade(requests.adapters.HTTPAdapter):
    """Sends simple-salesforce's https:// requests to the plain-http loopback emulator."""

    def send(self, request, **kwargs):
        request.url = "http://" + request.url.split("://", 1)[1]
        return super().send(request, **kwargs)


@pytest.fixture()
def sf(emulator):
    """Logs in with the OAuth password flow, as a user of a connected app would."""
    session = requests.Session()
    host = emulator["instance_url"].split("://", 1)[1]

    class ToEmulator(Downgrade):
        # simple-salesforce logs in at https://login.salesforce.com; send that to the emulator too.
        def send(self, request, **kwargs):
            rest = request.url.split("://", 1)[1]
            request.url = "https://" + host + (rest[rest.index("/"):] if "/" in rest else "/")
            return super().send(request, **kwargs)

    session.mount("https://", ToEmulator())
    return Salesforce(username=USERNAME, password=PASSWORD, consumer_key=CLIENT_ID, consumer_secret=CLIENT_SECRET,
                      session=session)


def test_login_and_query(sf):
    result = sf.query("SELECT Id, Name FROM Account ORDER BY Name")
    assert result["totalSize"] == 3
    assert [r["Name"] for r in result["records"]] == ["Acme Corporation", "Globex", "Initech"]
    assert result["records"][0]["attributes"]["type"] == "Account"
    assert sf.api_usage["api-usage"].used >= 1


def test_query_all_across_pages(sf):
    records = [{"attributes": {"type": "Account"}, "Name": f"Bulk Co {i:04d}"} for i in range(2100)]
    for start in range(0, len(records), 200):
        results = sf.restful("composite/sobjects", method="POST",
                             json={"allOrNone": False, "records": records[start:start + 200]})
        assert all(r["success"] for r in results)
    first = sf.query("SELECT Id FROM Account")
    assert first["done"] is False and "nextRecordsUrl" in first
    assert len(first["records"]) == 2000
    everything = sf.query_all("SELECT Id, Name FROM Account WHERE Name LIKE 'Bulk Co%'")
    assert everything["totalSize"] == 2100
    assert len({r["Id"] for r in everything["records"]}) == 2100


def test_query_all_includes_deleted(sf):
    created = sf.Account.create({"Name": "Short lived"})
    sf.Account.delete(created["id"])
    live = sf.query("SELECT Id FROM Account WHERE Name = 'Short lived'")
    assert live["totalSize"] == 0
    deleted = sf.query_all("SELECT Id, IsDeleted FROM Account WHERE Name = 'Short lived'", include_deleted=True)
    assert deleted["totalSize"] == 1 and deleted["records"][0]["IsDeleted"] is True


def test_crud(sf):
    created = sf.Account.create({"Name": "Conformance Inc", "NumberOfEmployees": "42"})
    assert created["success"] is True and len(created["id"]) == 18
    record = sf.Account.get(created["id"])
    assert record["Name"] == "Conformance Inc" and record["NumberOfEmployees"] == 42
    assert sf.Account.update(created["id"], {"Industry": "Energy"}) == 204
    assert sf.Account.get(created["id"])["Industry"] == "Energy"
    assert sf.Account.delete(created["id"]) == 204
    with pytest.raises(SalesforceResourceNotFound) as error:
        sf.Account.get(created["id"])
    assert error.value.content[0]["errorCode"] == "ENTITY_IS_DELETED"


def test_validation_errors(sf):
    with pytest.raises(SalesforceMalformedRequest) as error:
        sf.Contact.create({"FirstName": "No last name"})
    assert error.value.content[0]["errorCode"] == "REQUIRED_FIELD_MISSING"
    assert error.value.content[0]["fields"] == ["LastName"]


def test_upsert_by_external_id(sf):
    assert sf.Account.upsert("External_Id__c/CONF-1", {"Name": "Upserted"}) == 201
    assert sf.Account.upsert("External_Id__c/CONF-1", {"Name": "Upserted again"}) == 200
    record = sf.Account.get_by_custom_id("External_Id__c", "CONF-1")
    assert record["Name"] == "Upserted again"


def test_composite_through_restful(sf):
    response = sf.restful("composite", method="POST", json={
        "allOrNone": True,
        "compositeRequest": [
            {"method": "POST", "url": "/services/data/v59.0/sobjects/Account", "referenceId": "newAccount",
             "body": {"Name": "Composite Parent"}},
            {"method": "POST", "url": "/services/data/v59.0/sobjects/Contact", "referenceId": "newContact",
             "body": {"LastName": "Composite Child", "AccountId": "@{newAccount.id}"}},
            {"method": "GET", "url": "/services/data/v59.0/query?q=SELECT+Id,Account.Name+FROM+Contact+WHERE+LastName='Composite Child'",
             "referenceId": "check"},
        ]})
    statuses = [r["httpStatusCode"] for r in response["compositeResponse"]]
    assert statuses == [201, 201, 200]
    check = response["compositeResponse"][2]["body"]
    assert check["records"][0]["Account"]["Name"] == "Composite Parent"


def test_bulk2_insert(sf):
    records = [{"Name": f"Bulk2 {i}", "External_Id__c": f"B2-{i}"} for i in range(25)]
    records.append({"Name": "", "External_Id__c": "B2-missing-name"})
    results = sf.bulk2.Account.insert(records=records, wait=0)
    assert results[0]["numberRecordsProcessed"] == 26
    assert results[0]["numberRecordsFailed"] == 1
    job_id = results[0]["job_id"]
    failed = list(csv.DictReader(io.StringIO(sf.bulk2.Account.get_failed_records(job_id))))
    assert len(failed) == 1 and failed[0]["sf__Error"].startswith("REQUIRED_FIELD_MISSING:")
    succeeded = list(csv.DictReader(io.StringIO(sf.bulk2.Account.get_successful_records(job_id))))
    assert len(succeeded) == 25 and all(row["sf__Created"] == "true" for row in succeeded)
    assert sf.query("SELECT COUNT() FROM Account WHERE Name LIKE 'Bulk2%'")["totalSize"] == 25


def test_bulk2_query(sf):
    rows = list(sf.bulk2.Contact.query("SELECT Id, LastName, Account.Name FROM Contact ORDER BY LastName", wait=0))
    text = "".join(rows)
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert [row["LastName"] for row in parsed] == ["Coyote", "Runner", "Scorpio"]
    assert parsed[0]["Account.Name"] == "Acme Corporation"


def test_describe_and_limits(sf):
    describe = sf.Contact.describe()
    names = {field["name"] for field in describe["fields"]}
    assert {"Id", "LastName", "AccountId", "CreatedDate"} <= names
    assert describe["keyPrefix"] == "003"
    account = sf.Account.describe()
    assert {"Contacts", "Opportunities"} <= {r["relationshipName"] for r in account["childRelationships"]}
    assert sf.limits()["DailyApiRequests"]["Max"] == 15000


def test_bulk_v1_insert_upsert_query_delete(sf):
    """Bulk API 1.0 (sf.bulk): JSON jobs and batches, per-row results, query results."""
    inserted = sf.bulk.Account.insert([{"Name": "V1 One", "External_Id__c": "V1-1"},
                                       {"Name": "V1 Two", "External_Id__c": "V1-2"},
                                       {"Name": "", "Industry": "Energy"}], batch_size=2)
    assert [row["success"] for row in inserted] == [True, True, False]
    assert inserted[0]["created"] is True and inserted[0]["id"].startswith("001")
    assert inserted[2]["errors"][0]["statusCode"] == "REQUIRED_FIELD_MISSING"

    upserted = sf.bulk.Account.upsert([{"Name": "V1 One renamed", "External_Id__c": "V1-1"},
                                       {"Name": "V1 Three", "External_Id__c": "V1-3"}], "External_Id__c")
    assert [(row["success"], row["created"]) for row in upserted] == [(True, False), (True, True)]
    assert upserted[0]["id"] == inserted[0]["id"]

    rows = sf.bulk.Account.query("SELECT Id, Name FROM Account WHERE Name LIKE 'V1 %' ORDER BY Name", lazy_operation=False)
    assert [row["Name"] for row in rows] == ["V1 One renamed", "V1 Three", "V1 Two"]

    deleted = sf.bulk.Account.delete([{"Id": row["Id"]} for row in rows])
    assert all(row["success"] for row in deleted)
    assert sf.query("SELECT COUNT() FROM Account WHERE Name LIKE 'V1 %'")["totalSize"] == 0


def test_search_and_tooling(sf):
    """SOSL through sf.search / sf.quick_search, and a Tooling API query."""
    found = sf.search("FIND {Acme OR Globex} RETURNING Account(Name ORDER BY Name), Contact(LastName WHERE FirstName = 'Road')")
    records = found["searchRecords"]
    assert [(r["attributes"]["type"], r.get("Name") or r.get("LastName")) for r in records] == [
        ("Account", "Acme Corporation"), ("Account", "Globex"), ("Contact", "Runner")]
    quick = sf.quick_search("Globex")
    assert "Account" in {r["attributes"]["type"] for r in quick["searchRecords"]}
    with pytest.raises(SalesforceMalformedRequest):
        sf.search("FIND Acme")

    entities = sf.toolingexecute("query/?q=SELECT+QualifiedApiName,KeyPrefix+FROM+EntityDefinition+WHERE+KeyPrefix='003'")
    assert entities["records"][0]["QualifiedApiName"] == "Contact"
    assert sf.toolingexecute("query/?q=SELECT+Id,Name+FROM+ApexClass")["totalSize"] == 0


def test_soap_login_with_security_token(emulator):
    """simple-salesforce's username + password + security token login (the SOAP partner `login`)."""
    session = requests.Session()
    host = emulator["instance_url"].split("://", 1)[1]

    class ToEmulator(Downgrade):
        def send(self, request, **kwargs):
            rest = request.url.split("://", 1)[1]
            request.url = "https://" + host + (rest[rest.index("/"):] if "/" in rest else "/")
            return super().send(request, **kwargs)

    session.mount("https://", ToEmulator())
    sf = Salesforce(username=USERNAME, password=PASSWORD, security_token="", session=session)
    assert sf.query("SELECT COUNT() FROM Account")["totalSize"] == 3
    with pytest.raises(SalesforceAuthenticationFailed):
        Salesforce(username=USERNAME, password="wrong", security_token="", session=session)
