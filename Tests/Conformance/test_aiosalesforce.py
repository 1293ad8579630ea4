"""Conformance: the unchanged aiosalesforce client (asyncio, httpx) against the org emulator.

aiosalesforce accepts only `https://<domain>.my.salesforce.com` base URLs, so the test gives it
that URL and an httpx transport that sends its requests to the loopback emulator over plain http
(the https→http redirect, nothing else). It logs in with the SOAP partner `login` call (SoapLogin), as its
users do with a username, password and security token, then drives REST, Composite Batch and
Bulk API 2.0. Run with pytest; PIPELINE_BIN names the binary (default .build/debug/pipeline).
"""
import asyncio

import httpx
import pytest
from aiosalesforce import Salesforce, SoapLogin
from aiosalesforce.exceptions import AuthenticationError

from conftest import PASSWORD, USERNAME


@pytest.fixture()
def instance_url(emulator):
    return emulator["instance_url"]


class ToEmulator(httpx.AsyncHTTPTransport):
    """Sends https://emulator.my.salesforce.com requests to the plain-http loopback emulator."""

    def __init__(self, instance_url):
        super().__init__()
        self.target = httpx.URL(instance_url)

    async def handle_async_request(self, request):
        request.url = request.url.copy_with(scheme=self.target.scheme, host=self.target.host, port=self.target.port)
        return await super().handle_async_request(request)


def run(instance_url, body, password=PASSWORD):
    async def main():
        async with httpx.AsyncClient(transport=ToEmulator(instance_url)) as http:
            salesforce = Salesforce(httpx_client=http, base_url="https://emulator.my.salesforce.com",
                                    auth=SoapLogin(username=USERNAME, password=password, security_token=""))
            return await body(salesforce)
    return asyncio.run(main())


def test_soap_login_rest_and_query(instance_url):
    async def body(sf):
        limits = await sf.get_limits()
        assert limits["DailyApiRequests"]["Max"] > 0
        account_id = await sf.sobject.create("Account", {"Name": "Aio One", "External_Id__c": "AIO-1"})
        assert account_id.startswith("001")
        record = await sf.sobject.get("Account", account_id)
        assert record["Name"] == "Aio One"
        await sf.sobject.update("Account", account_id, {"Name": "Aio One renamed"})
        by_key = await sf.sobject.get("Account", "AIO-1", external_id_field="External_Id__c")
        assert by_key["Id"] == account_id and by_key["Name"] == "Aio One renamed"
        upserted = await sf.sobject.upsert("Account", "AIO-2", external_id_field="External_Id__c", data={"Name": "Aio Two"})
        assert upserted.created is True
        names = [row["Name"] async for row in sf.query("SELECT Name FROM Account WHERE Name LIKE 'Aio %' ORDER BY Name")]
        assert names == ["Aio One renamed", "Aio Two"]
        await sf.sobject.delete("Account", account_id)
        remaining = [row async for row in sf.query("SELECT Id FROM Account WHERE Name LIKE 'Aio %'")]
        assert len(remaining) == 1
    run(instance_url, body)


def test_composite_batch(instance_url):
    async def body(sf):
        async with sf.composite.batch(halt_on_error=False) as batch:
            created = batch.sobject.create("Account", {"Name": "Aio Batch"})
            query = batch.query("SELECT COUNT() FROM Account")
        assert created.is_success and created.id.startswith("001")
        assert query.is_success
    run(instance_url, body)


def test_bulk_v2_insert(instance_url):
    async def body(sf):
        result = await sf.bulk_v2.insert("Contact", [{"LastName": "Aio Bulk 1"}, {"LastName": "Aio Bulk 2"}, {"FirstName": "No last name"}])
        assert len(result.successful_results) == 2
        assert len(result.failed_results) == 1
        assert result.failed_results[0]["sf__Error"].startswith("REQUIRED_FIELD_MISSING")
    run(instance_url, body)


def test_a_wrong_password_is_a_login_fault(instance_url):
    async def body(sf):
        await sf.get_limits()
    with pytest.raises(AuthenticationError) as failure:
        run(instance_url, body, password="wrong")
    assert failure.value.error_code == "INVALID_LOGIN"
