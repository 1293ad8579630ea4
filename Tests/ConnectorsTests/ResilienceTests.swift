import Connectors
import Foundation
import JSON
import OrgEmulatorTesting
import Testing

/// Re-authentication, retries, giving up, dropped connections, the daily limit, the in-flight
/// limit, and that no error text shows a secret.
@Suite struct ResilienceTests {
    static let passwordAuth = OrgAuth.password(username: SampleOrg.username, password: SampleOrg.password, securityToken: nil,
                                               clientId: SampleOrg.clientId, clientSecret: SampleOrg.clientSecret)
    static let secrets = [SampleOrg.password, SampleOrg.clientSecret, SampleOrg.refreshToken]

    // MARK: Re-authentication

    @Test func reauthenticatesWhenTheSessionExpires() async throws {
        try await withClient(auth: Self.passwordAuth) { org, client in
            try await org.setFaults(["sessionExpiryEvery": 3])
            for _ in 0..<20 {
                #expect(try await client.count("SELECT COUNT() FROM Account") == 3)
            }
            let usage = await client.usage()
            // Each token serves three requests: 7 tokens for 20 requests.
            #expect(usage.byKind["auth"] == 7)
            #expect(usage.byKind["query"] == 20 + 6)
            #expect(usage.retries == 0)
            #expect(await org.received("auth") == 7)
        }
    }

    @Test func concurrentRequestsShareOneReauthentication() async throws {
        try await withTestOrg { org in
            let transport = ObservingTransport(AsyncHTTPClientTransport(maxConnections: 4, environment: [:]))
            let client = try org.client(auth: Self.passwordAuth, maxInFlight: 4, transport: transport)
            try await client.connect()
            try await org.setFaults(["sessionExpiryEvery": 10])
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 { group.addTask { try await client.count("SELECT COUNT() FROM Account") } }
                for try await count in group { #expect(count == 3) }
            }
            let usage = await client.usage()
            // 40 requests, a token per ~10 of them: 1 + about 4 re-authentications, never one per request.
            #expect((usage.byKind["auth"] ?? 0) >= 4)
            #expect((usage.byKind["auth"] ?? 0) <= 8)
            await client.shutdown()
        }
    }

    @Test func everyWriteAPISurvivesSessionExpiry() async throws {
        try await withClient(auth: Self.passwordAuth) { org, client in
            try await org.setFaults(["sessionExpiryEvery": 1])
            let id = try await client.create("Account", ["Name": "Expiring"])
            try await client.update("Account", id: id, ["Industry": "Energy"])
            _ = try await client.upsert("Account", externalIdField: "External_Id__c", value: "EXP-1", ["Name": "Expiring 2"])
            #expect(try await client.createRecords([account("Expiring 3")]).allSatisfy { $0.success })
            let bulk = try await client.bulkIngest(object: "Account", operation: "insert", columns: ["Name"], rows: [["Expiring 4"]],
                                                   pollInterval: 0.01)
            #expect(bulk.rows.first?.created == true)
            #expect(try await collect(client.query("SELECT Id FROM Account WHERE Name LIKE 'Expiring%'")).count == 4)
            #expect(try await client.retrieve("Account", id: id)["Industry"] == "Energy")
            // Nothing was created twice.
            #expect(await org.recordCount("Account") == 7)
        }
    }

    // MARK: Retries and giving up

    @Test func retriesInjected503s() async throws {
        try await withClient(retry: RetryPolicy(maxAttempts: 10, baseDelaySeconds: 0.001, maxDelaySeconds: 0.01)) { org, client in
            try await org.setFaults(["errorRate": 0.3, "errorStatus": 503, "errorCode": "SERVER_UNAVAILABLE", "seed": 7])
            for _ in 0..<30 {
                #expect(try await client.count("SELECT COUNT() FROM Account") == 3)
            }
            let id = try await client.create("Account", ["Name": "Created through 503s"])
            #expect(try await client.retrieve("Account", id: id)["Name"] == "Created through 503s")
            let usage = await client.usage()
            #expect(usage.retries > 0)
            #expect(usage.requests == 32 + usage.retries)
            #expect(await org.received("query") == usage.byKind["query"])
            try await org.setFaults([:])
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Created through 503s'") == 1)
        }
    }

    @Test func retriesErrorBursts() async throws {
        try await withClient(retry: RetryPolicy(maxAttempts: 8, baseDelaySeconds: 0.001, maxDelaySeconds: 0.01)) { org, client in
            try await org.setFaults(["errorRate": 0.2, "errorStatus": 503, "errorCode": "SERVER_UNAVAILABLE", "errorBurst": 2, "seed": 3])
            let records = try await collect(client.query("SELECT Id FROM Account"))
            #expect(records.count == 3)
            for _ in 0..<10 { _ = try await client.describe("Account") ; _ = try await client.limits() }
            #expect(await client.usage().retries >= 2)
        }
    }

    @Test func retriesUnableToLockRow() async throws {
        try await withClient(retry: RetryPolicy(maxAttempts: 10, baseDelaySeconds: 0.001, maxDelaySeconds: 0.01)) { org, client in
            try await org.setFaults(["errorRate": 0.3, "errorStatus": 400, "errorCode": "UNABLE_TO_LOCK_ROW", "seed": 11])
            for _ in 0..<15 {
                #expect(try await client.count("SELECT COUNT() FROM Account") == 3)
            }
            #expect(await client.usage().retries > 0)
        }
    }

    @Test func doesNotRetryClientErrors() async throws {
        try await withClient { org, client in
            try await org.setFaults(["errorRate": 1, "errorStatus": 400, "errorCode": "INVALID_FIELD"])
            let error = await caught { try await client.count("SELECT COUNT() FROM Account") }
            #expect((error as? OrgAPIError)?.errorCode == "INVALID_FIELD")
            #expect(await client.usage().requests == 1)
            #expect(await client.usage().retries == 0)
        }
    }

    @Test func givesUpAfterMaxAttempts() async throws {
        try await withClient(auth: Self.passwordAuth) { org, client in
            try await client.connect()
            try await org.setFaults(["errorRate": 1, "errorStatus": 503, "errorCode": "SERVER_UNAVAILABLE"])
            var errorTexts: [String] = []
            let error = await caught { try await client.count("SELECT COUNT() FROM Account") }
            guard case .gaveUp(let attempts, let last, _)? = error as? OrgClientError else {
                Issue.record("expected gaveUp, got \(String(describing: error))")
                return
            }
            #expect(attempts == 3)
            #expect(last.contains("SERVER_UNAVAILABLE"))
            errorTexts += texts(of: error!)
            let usage = await client.usage()
            #expect(usage.byKind["query"] == 3)
            #expect(usage.retries == 2)
            #expect(await org.received("query") == 3)

            // A create that keeps getting 503s gives up too (a 503 means the org did not apply it).
            let createError = await caught { try await client.create("Account", ["Name": "Never"]) }
            if case .gaveUp(let attempts, _, _)? = createError as? OrgClientError { #expect(attempts == 3) } else {
                Issue.record("expected gaveUp, got \(String(describing: createError))")
            }
            errorTexts += createError.map(texts(of:)) ?? []
            // Streams end with the same error.
            let streamError = await caught { try await collect(client.query("SELECT Id FROM Account")) }
            if case .gaveUp? = streamError as? OrgClientError {} else { Issue.record("expected gaveUp, got \(String(describing: streamError))") }
            errorTexts += streamError.map(texts(of:)) ?? []
            try await org.setFaults([:])
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Never'") == 0)
            expectNoSecret(errorTexts, secrets: Self.secrets)
        }
    }

    @Test func authenticationIsRetriedOnServerErrors() async throws {
        try await withTestOrg { org in
            // With this seed the emulator fails the first request (the token request) and not the next ones.
            let seed = try #require(SplitMix64.seed { draws in draws[0] < 0.5 && draws[1] >= 0.5 && draws[2] >= 0.5 && draws[3] >= 0.5 })
            try await org.setFaults(["errorRate": 0.5, "seed": .integer(Int64(seed))])
            let client = try org.client(auth: Self.passwordAuth)
            #expect(try await client.count("SELECT COUNT() FROM Account") == 3)
            let usage = await client.usage()
            #expect(usage.byKind["auth"] == 2)
            #expect(usage.retries == 1)
            await client.shutdown()
        }
    }

    @Test func authenticationGivesUpWithoutLeaking() async throws {
        try await withTestOrg { org in
            try await org.setFaults(["errorRate": 1])
            let client = try org.client(auth: Self.passwordAuth)
            let error = await caught { try await client.connect() }
            if case .authenticationFailed? = error as? OrgClientError {} else {
                Issue.record("expected authenticationFailed, got \(String(describing: error))")
            }
            #expect(await client.usage().byKind["auth"] == 3)
            expectNoSecret(error.map(texts(of:)) ?? [], secrets: Self.secrets)
            await client.shutdown()
        }
    }

    @Test func unreachableOrgGivesUp() async throws {
        // A port nothing listens on. (async-http-client retries connecting until the request's
        // timeout, so each attempt takes `timeoutSeconds`.)
        let probe = try await TestOrg.start()
        let deadURL = probe.instanceURL
        await probe.stop()
        let client = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: deadURL, loginURL: deadURL, timeoutSeconds: 0.5,
                                                                          auth: .accessToken(accessToken: "tok-unreachable-123"),
                                                                          retry: TestOrg.fastRetry))
        let error = await caught { try await client.count("SELECT COUNT() FROM Account") }
        if case .gaveUp(let attempts, _, _)? = error as? OrgClientError { #expect(attempts == 3) } else {
            Issue.record("expected gaveUp, got \(String(describing: error))")
        }
        // A create is never repeated blindly: one attempt, reported as uncertain (the client cannot
        // tell a refused connection from a lost answer) or given up.
        let createError = await caught { try await client.create("Account", ["Name": "Nowhere"]) }
        switch createError as? OrgClientError {
        case .uncertain?: #expect(await client.usage().byKind["sobject"] == 1)
        case .gaveUp?: break
        default: Issue.record("expected uncertain or gaveUp, got \(String(describing: createError))")
        }
        expectNoSecret((error.map(texts(of:)) ?? []) + (createError.map(texts(of:)) ?? []), secrets: ["tok-unreachable-123"])
        await client.shutdown()
    }

    // MARK: Dropped connections

    @Test func aDroppedCreateIsUncertainAndNotRetried() async throws {
        try await withClient { org, client in
            try await org.setFaults(["dropAfterCommitRate": 1])
            let error = await caught { try await client.create("Account", ["Name": "Dropped Create"]) }
            guard case .uncertain(let message)? = error as? OrgClientError else {
                Issue.record("expected uncertain, got \(String(describing: error))")
                return
            }
            #expect(message.contains("POST"))
            expectNoSecret(texts(of: error!), secrets: [org.accessToken])
            let usage = await client.usage()
            #expect(usage.byKind["sobject"] == 1)
            #expect(usage.retries == 0)
            #expect(await org.received("sobject") == 1)
            // Reads are not dropped; the create was committed exactly once.
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Dropped Create'") == 1)
        }
    }

    @Test func droppedCollectionAndCompositeCreatesAreUncertain() async throws {
        try await withClient { org, client in
            try await org.setFaults(["dropAfterCommitRate": 1])
            let collection = await caught { try await client.createRecords([account("Dropped Coll 1"), account("Dropped Coll 2")]) }
            if case .uncertain? = collection as? OrgClientError {} else { Issue.record("expected uncertain, got \(String(describing: collection))") }
            let composite = await caught {
                try await client.composite([CompositeSubrequest(method: "POST", url: client.apiPath + "/sobjects/Account", referenceId: "a",
                                                                body: ["Name": "Dropped Composite"])], allOrNone: true)
            }
            if case .uncertain? = composite as? OrgClientError {} else { Issue.record("expected uncertain, got \(String(describing: composite))") }
            let bulkQueryRows = try await bulkRows(client.bulkQuery("SELECT Id FROM Account WHERE Name LIKE 'Dropped%'", pollInterval: 0.01))
            #expect(bulkQueryRows.count == 3)
            #expect(await client.usage().retries == 0)
            #expect(await org.received("collections") == 1)
            #expect(await org.received("composite") == 1)
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name LIKE 'Dropped Coll%'") == 2)
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Dropped Composite'") == 1)
        }
    }

    @Test func droppedIdempotentWritesAreRetried() async throws {
        try await withClient(retry: RetryPolicy(maxAttempts: 10, baseDelaySeconds: 0.001, maxDelaySeconds: 0.01)) { org, client in
            let id = try await client.create("Account", ["Name": "Drop Target"])
            try await org.setFaults(["dropAfterCommitRate": 0.5, "seed": 5])
            for round in 1...8 {
                try await client.update("Account", id: id, ["NumberOfEmployees": .integer(Int64(round))])
                _ = try await client.upsert("Account", externalIdField: "External_Id__c", value: "DROP-1", ["Name": .string("Upserted \(round)")])
            }
            let usage = await client.usage()
            #expect(usage.retries > 0)
            try await org.setFaults([:])
            #expect(try await client.retrieve("Account", id: id)["NumberOfEmployees"]?.integerValue == 8)
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE External_Id__c = 'DROP-1'") == 1)
        }
    }

    @Test func alwaysDroppedUpdateGivesUpAfterApplyingIt() async throws {
        try await withClient { org, client in
            let id = try await client.create("Account", ["Name": "Drop Always"])
            try await org.setFaults(["dropAfterCommitRate": 1])
            let error = await caught { try await client.update("Account", id: id, ["Industry": "Banking"]) }
            if case .gaveUp(let attempts, _, _)? = error as? OrgClientError { #expect(attempts == 3) } else {
                Issue.record("expected gaveUp, got \(String(describing: error))")
            }
            #expect(await client.usage().byKind["sobject"] == 4)
            #expect(await org.received("sobject") == 4)
            // GETs are never dropped.
            #expect(try await client.retrieve("Account", id: id)["Industry"] == "Banking")
            #expect(await client.usage().retries == 2)
        }
    }

    @Test func aDroppedDeleteThatWasAppliedIsNotAnError() async throws {
        try await withClient { org, client in
            let id = try await client.create("Account", ["Name": "Drop Delete"])
            try await org.setFaults(["dropAfterCommitRate": 1])
            // The first DELETE is applied and its answer lost; the retry finds the record already deleted.
            try await client.delete("Account", id: id)
            #expect(await client.usage().retries == 1)
            try await org.setFaults([:])
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name = 'Drop Delete'") == 0)
        }
    }

    // MARK: Limits

    @Test func dailyLimitStopsTheClient() async throws {
        try await withClient { org, client in
            try await org.setFaults(["dailyRequestLimit": 3])
            for _ in 0..<3 { #expect(try await client.count("SELECT COUNT() FROM Account") == 3) }
            #expect(await client.usage().dailyUsage?.used == 3)
            #expect(await client.usage().dailyUsage?.max == 3)
            let error = await caught { try await client.count("SELECT COUNT() FROM Account") }
            guard case .requestLimitExceeded(let message)? = error as? OrgClientError else {
                Issue.record("expected requestLimitExceeded, got \(String(describing: error))")
                return
            }
            #expect(message.contains("TotalRequests Limit exceeded"))
            #expect(await client.usage().requests == 4)
            #expect(await client.usage().retries == 0)
            let streamError = await caught { try await collect(client.query("SELECT Id FROM Account")) }
            if case .requestLimitExceeded? = streamError as? OrgClientError {} else {
                Issue.record("expected requestLimitExceeded, got \(String(describing: streamError))")
            }
        }
    }

    @Test func keepsAtMostMaxInFlightRequests() async throws {
        try await withTestOrg { org in
            let transport = ObservingTransport(AsyncHTTPClientTransport(maxConnections: 4, environment: [:]))
            let client = try org.client(maxInFlight: 4, transport: transport)
            try await org.setFaults(["latencyMs": 100])
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await client.limits() } }
                try await group.waitForAll()
            }
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= .milliseconds(200), "\(elapsed)")
            #expect(transport.peakInFlight <= 4)
            #expect(transport.peakInFlight >= 2)
            #expect(transport.requestLines.count == 8)
            await client.shutdown()
        }
    }

    @Test func oneInFlightSerializesRequests() async throws {
        try await withTestOrg { org in
            let transport = ObservingTransport(AsyncHTTPClientTransport(maxConnections: 1, environment: [:]))
            let client = try org.client(maxInFlight: 1, transport: transport)
            try await org.setFaults(["latencyMs": 30])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 { group.addTask { _ = try await client.limits() } }
                try await group.waitForAll()
            }
            #expect(transport.peakInFlight == 1)
            await client.shutdown()
        }
    }
}

extension ResilienceTests {
    /// Every failure a password-flow client can meet, with every text of every error checked for
    /// the password, client secret, refresh token and each access token the org issued.
    @Test func noErrorTextShowsASecret() async throws {
        try await withTestOrg { org in
            let transport = ObservingTransport(AsyncHTTPClientTransport(maxConnections: 8, environment: [:]))
            let client = try org.client(auth: Self.passwordAuth, transport: transport)
            var errors: [any Error] = []
            func record(_ body: () async throws -> Void) async {
                do { try await body() } catch { errors.append(error) }
            }
            try await client.connect()
            await record { _ = try await client.create("Account", ["Industry": "Energy"]) }
            await record { _ = try await collect(client.query("SELECT Id FRM Account")) }
            await record { _ = try await client.retrieve("Account", id: "001000000000000AAA") }
            await record { _ = try await client.describe("Nope__c") }
            await record { _ = try await bulkRows(client.bulkQuery("SELECT Id FRM Account", pollInterval: 0.01)) }
            let tree = try await client.tree("Account", records: [["attributes": ["type": "Account", "referenceId": "r"]]])
            errors += tree.errors.values.flatMap { $0 }
            errors += try await client.createRecords([["attributes": ["type": "Account"]]]).flatMap(\.errors)
            try await org.setFaults(["sessionExpiryEvery": 1])
            for _ in 0..<3 { await record { _ = try await client.count("SELECT COUNT() FROM Account") } }
            await record { _ = try await client.create("Account", ["Industry": "Energy"]) }
            try await org.setFaults(["errorRate": 1])
            await record { _ = try await client.count("SELECT COUNT() FROM Account") }
            try await org.setFaults(["dropAfterCommitRate": 1])
            await record { _ = try await client.create("Account", ["Name": "Dropped"]) }
            await record { try await client.update("Account", id: "001000000000000AAA", ["Name": "x"]) }
            try await org.setFaults(["dailyRequestLimit": 1])
            await record { _ = try await client.count("SELECT COUNT() FROM Account") }
            try await org.setFaults(["sessionExpiryEvery": 1, "errorRate": 1])
            await record { _ = try await client.count("SELECT COUNT() FROM Account") }
            await client.shutdown()

            #expect(errors.count >= 12)
            let tokens = transport.issuedTokens
            #expect(tokens.count >= 2)
            expectNoSecret(errors.flatMap(texts(of:)), secrets: Self.secrets + tokens)
            // A password-flow client that cannot log in says so without the password either.
            let wrong = try org.client(auth: .password(username: SampleOrg.username, password: "not-\(SampleOrg.password)", securityToken: "SEC-TOK-1",
                                                       clientId: SampleOrg.clientId, clientSecret: SampleOrg.clientSecret))
            try await org.setFaults([:])
            let refused = await caught { try await wrong.connect() }
            expectNoSecret(refused.map(texts(of:)) ?? [], secrets: ["not-\(SampleOrg.password)", "SEC-TOK-1", SampleOrg.password, SampleOrg.clientSecret])
            await wrong.shutdown()
        }
    }
}

/// The emulator's fault generator (SplitMix64), to pick a fault seed whose first draws are known.
enum SplitMix64 {
    static func draws(seed: UInt64, count: Int) -> [Double] {
        var state = seed
        return (0..<count).map { _ in
            state &+= 0x9E3779B97F4A7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
            z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
            z ^= z >> 31
            return Double(z >> 11) / Double(1 << 53)
        }
    }

    /// The first seed from 1 whose first draws satisfy `accept`.
    static func seed(_ accept: ([Double]) -> Bool) -> UInt64? {
        (1...10_000).lazy.map(UInt64.init).first { accept(draws(seed: $0, count: 8)) }
    }
}
