import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import OrgEmulator
import OrgEmulatorTesting
import Testing

/// The emulator's admin API (`/emulator/stats`, `reset`, `clock`, `faults`) and injected faults.
@Suite struct AdminAndFaultsTests {
    static let seedCounts = ["Account": 3, "Contact": 3, "Opportunity": 1, "Case": 1, "Order__c": 1, "Order_Line__c": 2,
                             "User": 6, "Organization": 1, "RecordType": 2]

    @Test func statsCountRequestsByKindAndWrites() async throws {
        try await withEmulator { emu in
            let fresh = try await emu.stats()
            #expect(fresh["requests"] == ["total": 0, "writes": 0, "inFlight": 0, "byKind": [:]])
            #expect(try await emu.counts() == Self.seedCounts)

            #expect(try await emu.rest("GET", "/sobjects/Account/describe").status == 200)        // describe
            #expect(try await emu.rest("GET", "/sobjects").status == 200)                          // describe
            let id = try await emu.create("Account", ["Name": "Counted"])                           // sobject, write
            #expect(try await emu.rest("GET", "/sobjects/Account/\(id)").status == 200)           // sobject
            #expect(try await emu.rest("POST", "/sobjects/Account", json: ["Industry": "x"]).status == 400)  // sobject, failed write
            #expect(try await emu.rest("POST", "/composite/sobjects", json: ["records": [
                ["attributes": ["type": "Account"], "Name": "Collected"]]]).status == 200)         // collections, write
            #expect(try await emu.rest("GET", "/composite/sobjects/Account?ids=\(id)").status == 200)  // collections
            #expect(try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                ["method": "POST", "url": .string(api + "/sobjects/Account"), "referenceId": "a", "body": ["Name": "Composed"]],
            ]]).status == 200)                                                                    // composite, write
            #expect(try await emu.oauthToken([("grant_type", "password"), ("client_id", SampleOrg.clientId),
                                              ("username", SampleOrg.username), ("password", SampleOrg.password)]).status == 200)  // auth
            #expect(try await emu.send("GET", "/services/data").status == 200)                     // versions
            #expect(try await emu.rest("GET", "/limits").status == 200)                            // limits
            #expect(try await emu.rest("GET", "/sobjects/Account/updated/?start=2000-01-01T00:00:00Z&end=2199-01-01T00:00:00Z").status == 200)  // changes
            // Admin requests are not counted.
            try await emu.advanceClock(1)

            let stats = try await emu.stats()
            #expect(stats["requests"]?["total"] == 12)
            #expect(stats["requests"]?["writes"] == 4)
            #expect(stats["requests"]?["byKind"] == ["describe": 2, "sobject": 3, "collections": 2, "composite": 1, "auth": 1,
                                                    "versions": 1, "limits": 1, "changes": 1])
            var expected = Self.seedCounts
            expected["Account"] = 6
            #expect(try await emu.counts() == expected)
        }
    }

    @Test func resetRestoresTheSeedAndZeroesStats() async throws {
        try await withEmulator { emu in
            let created = try await emu.create("Account", ["Name": "Temporary"])
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            #expect(try await emu.rest("PATCH", "/sobjects/Account/\(acme)", json: ["Name": "Renamed"]).status == 204)
            let order = try await emu.id("Order__c", "Order_Number__c", "ORD-0001")
            #expect(try await emu.rest("DELETE", "/sobjects/Order__c/\(order)").status == 204)
            #expect(try await emu.setFaults(["errorRate": 1]).status == 200)

            let reset = try await emu.send("POST", "/emulator/reset", auth: .none)
            #expect(reset.status == 200)
            #expect(reset.json == ["reset": true])

            let stats = try await emu.stats()
            #expect(stats["requests"] == ["total": 0, "writes": 0, "inFlight": 0, "byKind": [:]])
            #expect(stats["dailyRequests"] == 0)
            #expect(try await emu.counts() == Self.seedCounts)

            // Faults are cleared and the daily counter restarts.
            let get = try await emu.rest("GET", "/sobjects/Account/External_Id__c/ACME-1")
            #expect(get.status == 200)
            #expect(get.json["Name"] == "Acme Corporation")
            #expect(get.header("Sforce-Limit-Info") == "api-usage=1/15000")
            expectError(try await emu.rest("GET", "/sobjects/Account/\(created)"), 404, "NOT_FOUND")
            #expect(try await emu.rest("GET", "/sobjects/Order__c/Order_Number__c/ORD-0001").status == 200)
        }
    }

    @Test func clockOnlyMovesForward() async throws {
        try await withEmulator { emu in
            let now = try await emu.advanceClock(0)
            #expect(isSalesforceTimestamp(now))
            let later = try await emu.advanceClock(86_400)
            #expect(later > now)
            #expect(try await emu.stats()["clockOffsetSeconds"] == 86_400)
            let backwards = try await emu.send("POST", "/emulator/clock", json: ["advanceSeconds": -5], auth: .none)
            expectError(backwards, 400, "INVALID_CLOCK")
            // Records created now carry the emulator's time.
            let id = try await emu.create("Account", ["Name": "Tomorrow"])
            let created = try #require(try await emu.record("Account", id)["CreatedDate"]?.stringValue)
            #expect(created >= later)
            // Answers are dated by the same clock, as an org's are.
            let answer = try await emu.send("GET", "/services/data", auth: .none)
            let date = try #require(answer.header("Date"))
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let dated = try #require(formatter.date(from: date), "an HTTP date: \(date)")
            #expect(abs(dated.timeIntervalSinceNow - 86_400) < 5, "\(date)")
        }
    }

    @Test func errorRateFaultAnswersWithTheConfiguredError() async throws {
        try await withEmulator { emu in
            let set = try await emu.setFaults(["errorRate": 1, "errorStatus": 503, "errorCode": "SERVER_UNAVAILABLE"])
            #expect(set.status == 200)
            for (method, path) in [("GET", api + "/limits"), ("GET", "/services/data"), ("POST", api + "/sobjects/Account")] {
                let reply = try await emu.send(method, path, json: method == "POST" ? ["Name": "Never"] : nil)
                #expect(reply.status == 503, "\(method) \(path)")
                #expect(reply.json == restError("SERVER_UNAVAILABLE", "Injected fault: SERVER_UNAVAILABLE"))
            }
            // The admin API is not affected; the failed create wrote nothing.
            #expect(try await emu.count("Account") == 3)

            #expect(try await emu.setFaults([:]).status == 200)
            #expect(try await emu.rest("GET", "/limits").status == 200)
        }
    }

    @Test func errorBurstFailsTheFollowingRequestsToo() async throws {
        try await withEmulator { emu in
            // With seed 106 the fault generator's first draws are 0.134, 0.714, 0.589, 0.857, …:
            // at errorRate 0.5 only the first request fails by chance.
            #expect(try await emu.setFaults(["errorRate": 0.5, "seed": 106]).status == 200)
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await emu.rest("GET", "/limits").status) }
            #expect(statuses == [503, 200, 200])

            #expect(try await emu.setFaults(["errorRate": 0.5, "seed": 106, "errorBurst": 2, "errorStatus": 500,
                                             "errorCode": "UNKNOWN_EXCEPTION"]).status == 200)
            var burst: [Reply] = []
            for _ in 0..<5 { burst.append(try await emu.rest("GET", "/limits")) }
            #expect(burst.map(\.status) == [500, 500, 500, 200, 200])
            for reply in burst.prefix(3) {
                #expect(reply.json == restError("UNKNOWN_EXCEPTION", "Injected fault: UNKNOWN_EXCEPTION"))
            }
        }
    }

    @Test func recordErrorRateFailsRecordsInCollections() async throws {
        try await withEmulator { emu in
            #expect(try await emu.setFaults(["recordErrorRate": 1]).status == 200)
            let reply = try await emu.rest("POST", "/composite/sobjects", json: ["allOrNone": false, "records": [
                ["attributes": ["type": "Account"], "Name": "Locked one"],
                ["attributes": ["type": "Account"], "Name": "Locked two"],
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let locked: JSONValue = ["success": false,
                                     "errors": [recordError("UNABLE_TO_LOCK_ROW", "Injected record fault: UNABLE_TO_LOCK_ROW")]]
            #expect(reply.json == [locked, locked])
            #expect(try await emu.count("Account") == 3)

            // Composite write subrequests fail the same way; reads are untouched.
            let composite = try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                ["method": "POST", "url": .string(api + "/sobjects/Account"), "referenceId": "w", "body": ["Name": "Locked"]],
                ["method": "GET", "url": .string(api + "/sobjects/Account/External_Id__c/ACME-1"), "referenceId": "r"],
            ]])
            let responses = composite.json["compositeResponse"]?.arrayValue ?? []
            #expect(responses.map { $0["httpStatusCode"] } == [400, 200])
            #expect(responses.first?["body"]?.arrayValue?.first?["errorCode"] == "UNABLE_TO_LOCK_ROW")
            // A single-record REST create is not a Collections record.
            _ = try await emu.create("Account", ["Name": "Plain REST"])
            #expect(try await emu.count("Account") == 4)
        }
    }

    @Test func dropAfterCommitClosesTheConnectionButKeepsTheChange() async throws {
        try await withEmulator { emu in
            #expect(try await emu.setFaults(["dropAfterCommitRate": 1]).status == 200)
            // A session of its own, so the request goes out on a fresh connection.
            let session = EmulatorHarness.makeSession()
            defer { session.finishTasksAndInvalidate() }
            await #expect(throws: (any Error).self) {
                let reply = try await emu.rest("POST", "/sobjects/Account", json: ["Name": "Dropped", "External_Id__c": "DROP-1"],
                                               session: session)
                print("dropAfterCommit answered \(reply.status) \(reply.text)")
            }
            #expect(try await emu.setFaults([:]).status == 200)
            #expect(try await emu.count("Account") == 4)
            let stored = try await emu.rest("GET", "/sobjects/Account/External_Id__c/DROP-1")
            #expect(stored.status == 200)
            #expect(stored.json["Name"] == "Dropped")
        }
    }

    @Test func dropAfterCommitDoesNotDropReads() async throws {
        try await withEmulator { emu in
            #expect(try await emu.setFaults(["dropAfterCommitRate": 1]).status == 200)
            #expect(try await emu.rest("GET", "/sobjects/Account/External_Id__c/ACME-1").status == 200)
            // Nor a write that failed: nothing was committed.
            let session = EmulatorHarness.makeSession()
            defer { session.finishTasksAndInvalidate() }
            let failed = try await emu.rest("POST", "/sobjects/Account", json: ["Industry": "x"], session: session)
            #expect(failed.status == 400)
        }
    }

    @Test func sessionExpiryInvalidatesTheToken() async throws {
        try await withEmulator { emu in
            #expect(try await emu.setFaults(["sessionExpiryEvery": 2]).status == 200)
            #expect(try await emu.rest("GET", "/limits").status == 200)
            #expect(try await emu.rest("GET", "/limits").status == 200)
            let expired = try await emu.rest("GET", "/limits")
            #expect(expired.status == 401)
            #expect(expired.json == restError("INVALID_SESSION_ID", "Session expired or invalid"))
            #expect(expired.header("WWW-Authenticate") == "Token")
            // It stays invalid.
            #expect(try await emu.rest("GET", "/limits").status == 401)

            let login = try await emu.oauthToken([("grant_type", "password"), ("client_id", SampleOrg.clientId),
                                                   ("client_secret", SampleOrg.clientSecret), ("username", SampleOrg.username),
                                                   ("password", SampleOrg.password)])
            #expect(login.status == 200)
            let token = try #require(login.json["access_token"]?.stringValue)
            #expect(try await emu.rest("GET", "/limits", auth: .token(token)).status == 200)
        }
    }

    @Test func dailyRequestLimitRefusesWithRequestLimitExceeded() async throws {
        try await withEmulator { emu in
            #expect(try await emu.setFaults(["dailyRequestLimit": 3]).status == 200)
            for used in 1...3 {
                let reply = try await emu.rest("GET", "/limits")
                #expect(reply.status == 200)
                #expect(reply.header("Sforce-Limit-Info") == "api-usage=\(used)/3")
            }
            let refused = try await emu.rest("GET", "/limits")
            #expect(refused.status == 403)
            #expect(refused.json == restError("REQUEST_LIMIT_EXCEEDED", "TotalRequests Limit exceeded."))
            let write = try await emu.rest("POST", "/sobjects/Account", json: ["Name": "Over the limit"])
            expectError(write, 403, "REQUEST_LIMIT_EXCEEDED")
            #expect(try await emu.count("Account") == 3)
        }
    }

    @Test func unknownOrInvalidFaultsAreRefused() async throws {
        try await withEmulator { emu in
            let unknown = try await emu.setFaults(["errorRate": 0.1, "bogus": 1])
            expectError(unknown, 400, "INVALID_FAULT")
            #expect(unknown.json.arrayValue?.first?["message"]?.stringValue?.contains("bogus") == true)
            expectError(try await emu.setFaults(["errorRate": 2]), 400, "INVALID_FAULT")
            expectError(try await emu.setFaults(["latencyMs": -1]), 400, "INVALID_FAULT")
            expectError(try await emu.setFaults(["errorRate"]), 400, "INVALID_FAULT")
            // The refused settings were not applied.
            #expect(try await emu.rest("GET", "/limits").status == 200)
        }
    }

    /// A web page cannot drive the admin API: a browser names the page's origin and can post
    /// only "simple" content types across origins without a preflight. Without the emulator's
    /// token such requests are refused; local tools (JSON, no foreign origin) and the token work.
    @Test func theAdminAPIRefusesWhatABrowserCanSendCrossOrigin() async throws {
        try await withEmulator { emu in
            _ = try await emu.rest("POST", "/sobjects/Account", json: ["Name": "Keep me"])
            let before = try await emu.count("Account")
            let plain = try await emu.send("POST", "/emulator/reset", body: Data(), contentType: "text/plain", auth: .none)
            #expect(plain.status == 401, "a text/plain post without the token")
            let foreign = try await emu.send("POST", "/emulator/reset", json: [:], headers: ["Origin": "http://evil.example"], auth: .none)
            #expect(foreign.status == 401, "a foreign origin without the token")
            let crossSite = try await emu.send("GET", "/emulator/stats", headers: ["Sec-Fetch-Site": "cross-site"], auth: .none)
            #expect(crossSite.status == 401)
            #expect(try await emu.count("Account") == before, "nothing was reset")
            let withToken = try await emu.send("GET", "/emulator/stats", headers: ["Origin": "http://evil.example"], auth: .bearer)
            #expect(withToken.status == 200, "the token always works")
            let local = try await emu.send("POST", "/emulator/clock", json: ["advanceSeconds": 1], auth: .none)
            #expect(local.status == 200, "a local tool posting JSON needs no token on loopback")
        }
    }

    /// Timestamps a client sends are parsed without trapping, whatever digits they hold.
    @Test(arguments: ["2026-01-01T12:00:00.½Z", "2026-01-01T12:00:00.٣Z", "２０２６-01-01", "2026-01-01T1２:00:00Z", "+026-01-01"])
    func malformedTimestampsAreRefusedNotTrapped(text: String) {
        #expect(SalesforceTime.parse(text) == nil)
    }
}
