import Connectors
import Foundation
import JSON
import Testing

/// Composite (references, allOrNone), Composite Graph and sObject Tree.
@Suite struct CompositeTests {
    @Test func compositeResolvesReferences() async throws {
        try await withClient { org, client in
            let api = client.apiPath
            let responses = try await client.composite([
                CompositeSubrequest(method: "POST", url: api + "/sobjects/Account", referenceId: "acct", body: ["Name": "Stark Industries"]),
                CompositeSubrequest(method: "POST", url: api + "/sobjects/Contact", referenceId: "tony",
                                    body: ["LastName": "Stark", "AccountId": "@{acct.id}"]),
                CompositeSubrequest(method: "GET", url: api + "/sobjects/Contact/@{tony.id}?fields=AccountId,LastName", referenceId: "check"),
                CompositeSubrequest(method: "PATCH", url: api + "/sobjects/Account/@{acct.id}", referenceId: "rename", body: ["Industry": "Energy"]),
            ], allOrNone: true)
            #expect(responses.map(\.referenceId) == ["acct", "tony", "check", "rename"])
            #expect(responses.map(\.httpStatusCode) == [201, 201, 200, 204])
            #expect(responses.allSatisfy { $0.error == nil })
            let accountId = try #require(responses[0].body["id"]?.stringValue)
            #expect(responses[2].body["AccountId"] == .string(accountId))
            #expect(try await client.retrieve("Account", id: accountId)["Industry"] == "Energy")
            #expect(await client.usage().byKind["composite"] == 1)
        }
    }

    @Test func compositeAllOrNoneRollsBack() async throws {
        try await withClient { org, client in
            let api = client.apiPath
            let subrequests = [
                CompositeSubrequest(method: "POST", url: api + "/sobjects/Account", referenceId: "acct", body: ["Name": "Oscorp"]),
                CompositeSubrequest(method: "POST", url: api + "/sobjects/Contact", referenceId: "bad",
                                    body: ["FirstName": "Norman", "AccountId": "@{acct.id}"]),
                CompositeSubrequest(method: "POST", url: api + "/sobjects/Contact", referenceId: "after",
                                    body: ["LastName": "Osborn", "AccountId": "@{acct.id}"]),
            ]
            let halted = try await client.composite(subrequests, allOrNone: true)
            #expect(halted.map(\.httpStatusCode) == [400, 400, 400])
            #expect(halted[1].error?.errorCode == "REQUIRED_FIELD_MISSING")
            #expect(halted[1].error?.fields == ["LastName"])
            #expect(halted[0].error?.errorCode == "PROCESSING_HALTED")
            #expect(halted[2].error?.errorCode == "PROCESSING_HALTED")
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Oscorp'") == 0)

            let partial = try await client.composite(subrequests, allOrNone: false)
            #expect(partial.map(\.httpStatusCode) == [201, 400, 201])
            #expect(partial[1].error?.errorCode == "REQUIRED_FIELD_MISSING")
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Oscorp'") == 1)
            #expect(try await client.count("SELECT COUNT() FROM Contact WHERE Account.Name = 'Oscorp'") == 1)
        }
    }

    @Test func graphsAreSeparateTransactions() async throws {
        try await withClient { org, client in
            let api = client.apiPath
            let results = try await client.graph([
                (graphId: "good", subrequests: [
                    CompositeSubrequest(method: "POST", url: api + "/sobjects/Account", referenceId: "a1", body: ["Name": "Graph Good"]),
                    CompositeSubrequest(method: "POST", url: api + "/sobjects/Contact", referenceId: "c1",
                                        body: ["LastName": "Goodman", "AccountId": "@{a1.id}"]),
                ]),
                (graphId: "bad", subrequests: [
                    CompositeSubrequest(method: "POST", url: api + "/sobjects/Account", referenceId: "a2", body: ["Name": "Graph Bad"]),
                    CompositeSubrequest(method: "POST", url: api + "/sobjects/Contact", referenceId: "c2",
                                        body: ["AccountId": "@{a2.id}"]),
                ]),
            ])
            #expect(results.map(\.graphId) == ["good", "bad"])
            #expect(results.map(\.isSuccessful) == [true, false])
            #expect(results[0].responses.map(\.httpStatusCode) == [201, 201])
            #expect(results[1].responses.contains { $0.error?.errorCode == "REQUIRED_FIELD_MISSING" })
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Graph Good'") == 1)
            #expect(try await client.count("SELECT COUNT() FROM Contact WHERE LastName = 'Goodman'") == 1)
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Graph Bad'") == 0)
            #expect(await client.usage().byKind["graph"] == 1)
        }
    }

    @Test func treeCreatesParentsWithChildren() async throws {
        try await withClient { org, client in
            let records: [JSONValue] = [
                ["attributes": ["type": "Account", "referenceId": "ref1"], "Name": "Tree One",
                 "Contacts": ["records": [
                    ["attributes": ["type": "Contact", "referenceId": "ref1c1"], "LastName": "Leaf"],
                    ["attributes": ["type": "Contact", "referenceId": "ref1c2"], "LastName": "Branch"],
                 ]]],
                ["attributes": ["type": "Account", "referenceId": "ref2"], "Name": "Tree Two"],
            ]
            let result = try await client.tree("Account", records: records)
            #expect(result.errors.isEmpty)
            #expect(Set(result.ids.keys) == ["ref1", "ref1c1", "ref1c2", "ref2"])
            let leaf = try await client.retrieve("Contact", id: try #require(result.ids["ref1c1"]))
            #expect(leaf["AccountId"] == .string(try #require(result.ids["ref1"])))
            #expect(await client.usage().byKind["tree"] == 1)
        }
    }

    @Test func treeErrorsAreMappedByReferenceAndNothingIsCreated() async throws {
        try await withClient { org, client in
            let records: [JSONValue] = [
                ["attributes": ["type": "Account", "referenceId": "okParent"], "Name": "Tree Fails",
                 "Contacts": ["records": [
                    ["attributes": ["type": "Contact", "referenceId": "noLastName"], "FirstName": "Nameless"],
                    ["attributes": ["type": "Contact", "referenceId": "fine"], "LastName": "Fine"],
                 ]]],
                ["attributes": ["type": "Account", "referenceId": "tooLong"], "Name": .string(String(repeating: "n", count: 300))],
            ]
            let result = try await client.tree("Account", records: records)
            #expect(result.ids.isEmpty)
            #expect(Set(result.errors.keys) == ["noLastName", "tooLong"])
            #expect(result.errors["noLastName"]?.first?.errorCode == "REQUIRED_FIELD_MISSING")
            #expect(result.errors["noLastName"]?.first?.fields == ["LastName"])
            #expect(result.errors["tooLong"]?.first?.errorCode == "STRING_TOO_LONG")
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Tree Fails'") == 0)
            #expect(try await client.count("SELECT COUNT() FROM Contact WHERE LastName = 'Fine'") == 0)
            // A request-level error (not per record) is still thrown.
            let unknown = await caught { try await client.tree("Nope__c", records: records) }
            #expect((unknown as? OrgAPIError)?.status == 404)
        }
    }
}
