import Foundation
import JSON
import Testing

/// sObject Tree (all or none, results level by level) and Composite Graph (each graph its own
/// transaction).
@Suite struct TreeAndGraphTests {
    static func node(_ type: String, _ referenceId: String, _ fields: JSONObject) -> JSONValue {
        var object = fields
        object["attributes"] = ["type": .string(type), "referenceId": .string(referenceId)]
        return .object(object)
    }

    @Test func treeCreatesParentsAndChildrenLevelByLevel() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite/tree/Account", json: ["records": [
                Self.node("Account", "ref1", ["Name": "Tree One",
                                              "Contacts": ["records": [Self.node("Contact", "ref2", ["LastName": "Leaf A"]),
                                                                       Self.node("Contact", "ref3", ["LastName": "Leaf B", "Email": "leafb@tree.example"])]]]),
                Self.node("Account", "ref4", ["Name": "Tree Two",
                                              "Opportunities": ["records": [Self.node("Opportunity", "ref5", [
                                                  "Name": "Tree deal", "StageName": "Qualification", "CloseDate": "2030-06-30"])]]]),
            ]])
            #expect(reply.status == 201, "\(reply.text)")
            #expect(reply.json["hasErrors"] == false)
            let results = try #require(reply.json["results"]?.arrayValue)
            #expect(results.compactMap { $0["referenceId"]?.stringValue } == ["ref1", "ref4", "ref2", "ref3", "ref5"])
            #expect(results.allSatisfy { keys($0) == ["referenceId", "id"] })
            var ids: [String: String] = [:]
            for result in results { ids[result["referenceId"]!.stringValue!] = result["id"]?.stringValue }
            #expect(ids["ref1"]?.hasPrefix("001") == true && ids["ref4"]?.hasPrefix("001") == true)
            #expect(ids["ref2"]?.hasPrefix("003") == true && ids["ref5"]?.hasPrefix("006") == true)

            for ref in ["ref2", "ref3"] {
                #expect(try await emu.record("Contact", try #require(ids[ref]))["AccountId"]?.stringValue == ids["ref1"])
            }
            #expect(try await emu.record("Opportunity", try #require(ids["ref5"]))["AccountId"]?.stringValue == ids["ref4"])
            #expect(try await emu.count("Account") == 5)
            #expect(try await emu.count("Contact") == 5)
            #expect(try await emu.count("Opportunity") == 2)
        }
    }

    @Test func treeWithAFailingChildPersistsNothing() async throws {
        try await withEmulator { emu in
            let before = try await emu.counts()
            let reply = try await emu.rest("POST", "/composite/tree/Account", json: ["records": [
                Self.node("Account", "ref1", ["Name": "Doomed tree",
                                              "Contacts": ["records": [Self.node("Contact", "ref2", ["LastName": "Fine"]),
                                                                       Self.node("Contact", "ref3", ["FirstName": "No last name"])]]]),
            ]])
            #expect(reply.status == 400, "\(reply.text)")
            #expect(reply.json == ["hasErrors": true, "results": [
                ["referenceId": "ref3",
                 "errors": [recordError("REQUIRED_FIELD_MISSING", "Required fields are missing: [LastName]", fields: ["LastName"])]],
            ]])
            #expect(try await emu.counts() == before)
        }
    }

    @Test func treeRecordWithoutReferenceIdIsRefused() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite/tree/Account", json: ["records": [
                ["attributes": ["type": "Account"], "Name": "No ref"],
            ]])
            #expect(reply.status == 400)
            #expect(reply.json["hasErrors"] == true)
            #expect(try await emu.count("Account") == 3)
        }
    }

    static func subrequest(_ method: String, _ path: String, _ referenceId: String, body: JSONValue? = nil) -> JSONValue {
        var object: JSONObject = ["method": .string(method), "url": .string(api + path), "referenceId": .string(referenceId)]
        if let body { object["body"] = body }
        return .object(object)
    }

    @Test func graphsSucceedOrFailIndependently() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite/graph", json: ["graphs": [
                ["graphId": "good", "compositeRequest": [
                    Self.subrequest("POST", "/sobjects/Account", "acct", body: ["Name": "Graph good", "External_Id__c": "G1-ACC"]),
                    Self.subrequest("POST", "/sobjects/Contact", "person", body: ["LastName": "Graphed", "AccountId": "@{acct.id}"]),
                ]],
                ["graphId": "bad", "compositeRequest": [
                    Self.subrequest("POST", "/sobjects/Account", "acct", body: ["Name": "Graph bad", "External_Id__c": "G2-ACC"]),
                    Self.subrequest("POST", "/sobjects/Contact", "person", body: ["LastName": "Broken", "Bogus__c": 1, "AccountId": "@{acct.id}"]),
                ]],
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let graphs = try #require(reply.json["graphs"]?.arrayValue)
            try #require(graphs.count == 2)

            #expect(graphs[0]["graphId"] == "good")
            #expect(graphs[0]["isSuccessful"] == true)
            let good = graphs[0]["graphResponse"]?["compositeResponse"]?.arrayValue ?? []
            #expect(good.map { $0["httpStatusCode"] } == [201, 201])
            let account = try #require(good.first?["body"]?["id"]?.stringValue)
            let contact = try #require(good.last?["body"]?["id"]?.stringValue)
            #expect(try await emu.record("Contact", contact)["AccountId"]?.stringValue == account)
            #expect(try await emu.id("Account", "External_Id__c", "G1-ACC") == account)

            #expect(graphs[1]["graphId"] == "bad")
            #expect(graphs[1]["isSuccessful"] == false)
            let bad = graphs[1]["graphResponse"]?["compositeResponse"]?.arrayValue ?? []
            try #require(bad.count == 2)
            #expect(bad[0]["body"] == CompositeTests.halted)
            #expect(bad[0]["httpStatusCode"] == 400)
            #expect(bad[1]["body"]?.arrayValue?.first?["errorCode"] == "INVALID_FIELD")
            #expect(try await emu.rest("GET", "/sobjects/Account/External_Id__c/G2-ACC").status == 404)

            #expect(try await emu.count("Account") == 4)
            #expect(try await emu.count("Contact") == 4)
            let stats = try await emu.stats()
            #expect(stats["requests"]?["byKind"]?["graph"] == 1)
        }
    }
}
