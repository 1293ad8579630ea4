import Foundation
import JSON
import Testing

/// Composite: ordered subrequests, `@{ref.field}` references, allOrNone.
@Suite struct CompositeTests {
    static let halted = restError("PROCESSING_HALTED", "The transaction was rolled back since another operation in the same transaction failed.")

    static func subrequest(_ method: String, _ path: String, _ referenceId: String, body: JSONValue? = nil) -> JSONValue {
        var object: JSONObject = ["method": .string(method), "url": .string(api + path), "referenceId": .string(referenceId)]
        if let body { object["body"] = body }
        return .object(object)
    }

    @Test func createAccountThenContactReferencingIt() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite", json: ["allOrNone": true, "compositeRequest": [
                Self.subrequest("POST", "/sobjects/Account", "refAccount", body: ["Name": "Composite Co"]),
                Self.subrequest("POST", "/sobjects/Contact", "refContact", body: ["LastName": "Sample", "AccountId": "@{refAccount.id}"]),
                Self.subrequest("GET", "/sobjects/Contact/@{refContact.id}?fields=LastName,AccountId", "refGet"),
                Self.subrequest("PATCH", "/sobjects/Contact/@{refContact.id}", "refPatch", body: ["FirstName": "Simple"]),
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let responses = try #require(reply.json["compositeResponse"]?.arrayValue)
            try #require(responses.count == 4)

            let account = try #require(responses[0]["body"]?["id"]?.stringValue)
            #expect(responses[0] == [
                "body": ["id": .string(account), "success": true, "errors": []],
                "httpHeaders": ["Location": .string("/services/data/v62.0/sobjects/Account/\(account)")],
                "httpStatusCode": 201, "referenceId": "refAccount",
            ])
            let contact = try #require(responses[1]["body"]?["id"]?.stringValue)
            #expect(responses[1]["httpStatusCode"] == 201)
            #expect(responses[1]["httpHeaders"] == ["Location": .string("/services/data/v62.0/sobjects/Contact/\(contact)")])
            #expect(responses[2]["httpStatusCode"] == 200)
            #expect(responses[2]["body"]?["AccountId"]?.stringValue == account)
            #expect(responses[2]["httpHeaders"] == [:])
            #expect(responses[3] == ["body": .null, "httpHeaders": [:], "httpStatusCode": 204, "referenceId": "refPatch"])

            let stored = try await emu.record("Contact", contact)
            #expect(stored["AccountId"]?.stringValue == account)
            #expect(stored["FirstName"] == "Simple")
            #expect(try await emu.record("Account", account)["Name"] == "Composite Co")
        }
    }

    @Test func allOrNoneTrueRollsBackAndHaltsTheOthers() async throws {
        try await withEmulator { emu in
            let before = try await emu.counts()
            let reply = try await emu.rest("POST", "/composite", json: ["allOrNone": true, "compositeRequest": [
                Self.subrequest("POST", "/sobjects/Account", "first", body: ["Name": "Rolled back"]),
                Self.subrequest("POST", "/sobjects/Contact", "broken", body: ["FirstName": "No last name"]),
                Self.subrequest("POST", "/sobjects/Account", "third", body: ["Name": "Never run"]),
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let responses = try #require(reply.json["compositeResponse"]?.arrayValue)
            try #require(responses.count == 3)
            #expect(responses[0] == ["body": Self.halted, "httpHeaders": [:], "httpStatusCode": 400, "referenceId": "first"])
            #expect(responses[1] == ["body": restError("REQUIRED_FIELD_MISSING", "Required fields are missing: [LastName]", fields: ["LastName"]),
                                     "httpHeaders": [:], "httpStatusCode": 400, "referenceId": "broken"])
            #expect(responses[2] == ["body": Self.halted, "httpHeaders": [:], "httpStatusCode": 400, "referenceId": "third"])
            #expect(try await emu.counts() == before)
        }
    }

    @Test func allOrNoneFalseRunsIndependentSubrequests() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite", json: ["allOrNone": false, "compositeRequest": [
                Self.subrequest("POST", "/sobjects/Account", "good", body: ["Name": "Kept"]),
                Self.subrequest("POST", "/sobjects/Contact", "badContact", body: ["FirstName": "No last name"]),
                Self.subrequest("POST", "/sobjects/Contact", "goodContact", body: ["LastName": "Kept", "AccountId": "@{good.id}"]),
                Self.subrequest("PATCH", "/sobjects/Contact/@{badContact.id}", "dependent", body: ["Phone": "1"]),
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let responses = try #require(reply.json["compositeResponse"]?.arrayValue)
            try #require(responses.count == 4)
            #expect(responses[0]["httpStatusCode"] == 201)
            #expect(responses[1]["httpStatusCode"] == 400)
            #expect(responses[1]["body"]?.arrayValue?.first?["errorCode"] == "REQUIRED_FIELD_MISSING")
            #expect(responses[2]["httpStatusCode"] == 201)
            #expect(responses[3] == [
                "body": restError("PROCESSING_HALTED",
                                  "Invalid reference specified. No value for badContact.id found in badContact. Provided referenceId ('badContact.id') must start with a letter or a number, and it can contain only letters, numbers and underscores ('_')."),
                "httpHeaders": [:], "httpStatusCode": 400, "referenceId": "dependent",
            ])

            let account = try #require(responses[0]["body"]?["id"]?.stringValue)
            let contact = try #require(responses[2]["body"]?["id"]?.stringValue)
            #expect(try await emu.record("Account", account)["Name"] == "Kept")
            #expect(try await emu.record("Contact", contact)["AccountId"]?.stringValue == account)
            #expect(try await emu.count("Account") == 4)
            #expect(try await emu.count("Contact") == 4)
        }
    }

    /// Composite runs sObject resources, Collections and queries; a Bulk upload or any other
    /// resource in a subrequest is refused, the other subrequests run.
    @Test func resourcesCompositeDoesNotRunAreRefused() async throws {
        try await withEmulator { emu in
            let job = try await emu.rest("POST", "/jobs/ingest", json: ["object": "Account", "operation": "insert"])
            let jobId = try #require(job.json["id"]?.stringValue)
            let reply = try await emu.rest("POST", "/composite", json: ["allOrNone": false, "compositeRequest": [
                Self.subrequest("PUT", "/jobs/ingest/\(jobId)/batches", "upload", body: "Name\nViaComposite"),
                Self.subrequest("GET", "/limits", "limits"),
                Self.subrequest("POST", "/sobjects/Account", "account", body: ["Name": "Kept"]),
                Self.subrequest("GET", "/query?q=SELECT+Id+FROM+Account+WHERE+Name+=+'Kept'", "query"),
                Self.subrequest("GET", "/queryAll?q=SELECT+Id+FROM+Account+WHERE+Name+=+'Kept'", "queryAll"),
                Self.subrequest("POST", "/composite/sobjects", "collection",
                                body: ["records": [["attributes": ["type": "Account"], "Name": "Kept too"]]]),
            ]])
            let responses = try #require(reply.json["compositeResponse"]?.arrayValue)
            try #require(responses.count == 6)
            #expect(responses[4]["body"]?["totalSize"] == 1)
            #expect(responses[5]["httpStatusCode"] == 200)
            #expect(responses[5]["body"]?[0]?["success"] == true)
            for refused in responses[0...1] {
                #expect(refused["httpStatusCode"] == 400)
                #expect(refused["body"]?[0]?["errorCode"] == "INVALID_API_INPUT")
            }
            #expect(responses[2]["httpStatusCode"] == 201)
            #expect(responses[3]["body"]?["totalSize"] == 1)
        }
    }

    /// Collections calls in a Composite request, a children's call referring to the parents'
    /// results by position; at most 5 such calls (or queries) a request.
    @Test func collectionsCallsReferToEarlierCallsResults() async throws {
        try await withEmulator { emu in
            let parents: JSONValue = ["allOrNone": false, "records": [
                ["attributes": ["type": "Account"], "Name": "Coll P0"], ["attributes": ["type": "Account"], "Name": "Coll P1"],
            ]]
            let children: JSONValue = ["allOrNone": false, "records": [
                ["attributes": ["type": "Contact"], "LastName": "Coll C1", "AccountId": "@{c0[1].id}"],
            ]]
            let reply = try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                Self.subrequest("POST", "/composite/sobjects", "c0", body: parents),
                Self.subrequest("POST", "/composite/sobjects", "c1", body: children),
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let created = reply.json["compositeResponse"]?[0]?["body"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            let contact = try #require(reply.json["compositeResponse"]?[1]?["body"]?[0]?["id"]?.stringValue)
            #expect(try await emu.record("Contact", contact)["AccountId"]?.stringValue == created.last)

            let six: [JSONValue] = (0..<6).map { Self.subrequest("GET", "/query?q=SELECT+Id+FROM+Account", "q\($0)") }
            expectError(try await emu.rest("POST", "/composite", json: ["compositeRequest": .array(six)]), 400, "LIMIT_EXCEEDED")
            let five = try await emu.rest("POST", "/composite", json: ["compositeRequest": .array(Array(six.prefix(5)))])
            #expect(five.status == 200)
        }
    }

    /// References inside longer strings and nested arrays are all resolved; an index outside the
    /// results (negative too) fails its subrequest alone; `@{` without its `}` stays text.
    @Test func referencesAnywhereInABodyAndBadOnesFailTheirSubrequest() async throws {
        try await withEmulator { emu in
            let parents: JSONValue = ["allOrNone": false, "records": [
                ["attributes": ["type": "Account"], "Name": "Ref P0"], ["attributes": ["type": "Account"], "Name": "Ref P1"],
            ]]
            let reply = try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                Self.subrequest("POST", "/composite/sobjects", "c0", body: parents),
                Self.subrequest("POST", "/sobjects/Contact", "both", body: ["LastName": "Ref C", "AccountId": "@{c0[1].id}",
                                                                            "Description": "first @{c0[0].id}, then @{c0[1].id} and @{ left"]),
                Self.subrequest("POST", "/composite/sobjects/Account", "read", body: ["ids": ["@{c0[0].id}", "@{c0[1].id}"], "fields": ["Name"]]),
                Self.subrequest("POST", "/sobjects/Contact", "negative", body: ["LastName": "Ref N", "AccountId": "@{c0[-1].id}"]),
                Self.subrequest("POST", "/sobjects/Contact", "beyond", body: ["LastName": "Ref B", "AccountId": "@{c0[2].id}"]),
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let responses = try #require(reply.json["compositeResponse"]?.arrayValue)
            try #require(responses.count == 5)
            let ids = responses[0]["body"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            try #require(ids.count == 2)
            let contact = try #require(responses[1]["body"]?["id"]?.stringValue)
            let stored = try await emu.record("Contact", contact)
            #expect(stored["AccountId"]?.stringValue == ids[1])
            #expect(stored["Description"]?.stringValue == "first \(ids[0]), then \(ids[1]) and @{ left")
            #expect(responses[2]["body"]?.arrayValue?.map { $0["Name"] } == ["Ref P0", "Ref P1"])
            for (response, expression) in zip(responses[3...], ["c0[-1].id", "c0[2].id"]) {
                #expect(response["httpStatusCode"] == 400)
                #expect(response["body"]?[0]?["errorCode"] == "PROCESSING_HALTED")
                #expect(response["body"]?[0]?["message"]?.stringValue?.contains("No value for \(expression) found in c0.") == true)
            }
        }
    }

    /// A parent deleted by an earlier subrequest is gone for a later single create and a later
    /// Collections call, though an earlier call saw it live.
    @Test func aParentDeletedBetweenCollectionsCallsIsNoLongerLive() async throws {
        try await withEmulator { emu in
            let account = try #require(try await emu.rest("POST", "/sobjects/Account", json: ["Name": "Short-lived"]).json["id"]?.stringValue)
            let child: (String) -> JSONValue = { name in
                ["allOrNone": false, "records": [["attributes": ["type": "Contact"], "LastName": .string(name), "AccountId": .string(account)]]]
            }
            let reply = try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                Self.subrequest("POST", "/composite/sobjects", "before", body: child("Before")),
                Self.subrequest("DELETE", "/composite/sobjects?ids=\(account)&allOrNone=false", "delete"),
                Self.subrequest("POST", "/sobjects/Contact", "single", body: ["LastName": "Single", "AccountId": .string(account)]),
                Self.subrequest("POST", "/composite/sobjects", "after", body: child("After")),
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let responses = try #require(reply.json["compositeResponse"]?.arrayValue)
            try #require(responses.count == 4)
            #expect(responses[0]["body"]?[0]?["success"] == true)
            #expect(responses[1]["body"]?[0]?["success"] == true)
            #expect(responses[2]["httpStatusCode"] == 400)
            #expect(responses[2]["body"]?[0]?["errorCode"] == "INVALID_CROSS_REFERENCE_KEY")
            #expect(responses[3]["body"]?[0]?["success"] == false)
            #expect(responses[3]["body"]?[0]?["errors"]?[0]?["statusCode"] == "INVALID_CROSS_REFERENCE_KEY")
        }
    }

    @Test func moreThan25SubrequestsIsRefused() async throws {
        try await withEmulator { emu in
            let subrequests: [JSONValue] = (0..<26).map { Self.subrequest("POST", "/sobjects/Account", "a\($0)", body: ["Name": .string("N\($0)")]) }
            let reply = try await emu.rest("POST", "/composite", json: ["compositeRequest": .array(subrequests)])
            #expect(reply.status == 400)
            expectError(reply, 400, "LIMIT_EXCEEDED")
            #expect(try await emu.count("Account") == 3)

            let ok = try await emu.rest("POST", "/composite", json: ["compositeRequest": .array(Array(subrequests.prefix(25)))])
            #expect(ok.status == 200)
            #expect(try await emu.count("Account") == 28)
        }
    }

    @Test func malformedCompositeRequestsAreRefusedWhole() async throws {
        try await withEmulator { emu in
            let badReference = try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                Self.subrequest("POST", "/sobjects/Account", "ok", body: ["Name": "Not created"]),
                Self.subrequest("GET", "/sobjects/Account/describe", "bad-ref"),
            ]])
            expectError(badReference, 400, "JSON_PARSER_ERROR")
            let duplicate = try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                Self.subrequest("GET", "/limits", "same"), Self.subrequest("GET", "/limits", "same"),
            ]])
            #expect(duplicate.status == 400)
            let missing = try await emu.rest("POST", "/composite", json: ["allOrNone": true])
            expectError(missing, 400, "JSON_PARSER_ERROR")
            #expect(try await emu.count("Account") == 3)
        }
    }

    @Test func onlyGetsAreNotWrites() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                Self.subrequest("GET", "/sobjects/Account/External_Id__c/ACME-1", "acme"),
                Self.subrequest("GET", "/sobjects/Contact/Email/wile@acme.example", "wile"),
            ]])
            #expect(reply.status == 200)
            let responses = try #require(reply.json["compositeResponse"]?.arrayValue)
            #expect(responses.map { $0["httpStatusCode"] } == [200, 200])
            #expect(responses[0]["body"]?["Name"] == "Acme Corporation")
            let stats = try await emu.stats()
            #expect(stats["requests"]?["writes"] == 0)
            #expect(stats["requests"]?["byKind"]?["composite"] == 1)
        }
    }
}
