import Connectors
import Foundation
import JSON
import OrgEmulatorTesting
import Soups
import Stages
import Testing

/// Sync ups of new Account trees (1 + 3 Contacts) *without* an external id under the faults that
/// used to duplicate, orphan or misadopt records (issue 12): after a clean re-run, the org and the
/// soups agree exactly — every record once, every child under its own parent, nothing dirty, no
/// `local_` id left — and the counts add up to the records.
@Suite struct SyncUpIntegrityTests {
    static let sync = """
        [ { "syncName": "trees", "syncType": "syncUp", "soupName": "Accounts",
            "target": { "type": "parent_children", "relationshipType": "LOOKUP",
              "parent": { "sobjectType": "Account", "soupName": "Accounts" },
              "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts", "parentIdFieldName": "AccountId" },
              "createFieldlist": ["Name"], "updateFieldlist": ["Name"],
              "childrenCreateFieldlist": ["LastName", "AccountId"], "childrenUpdateFieldlist": ["LastName", "AccountId"] },
            "options": { "mergeMode": "OVERWRITE" } } ]
        """

    static func stages(_ strategy: String, maxInFlight: Int = 8) -> String {
        #"[ { "id": "up", "type": "syncUp", "sync": "trees", "strategy": "\#(strategy)", "maxInFlight": \#(maxInFlight) } ]"#
    }

    /// `count` new trees named `<prefix><i>`, contacts `<prefix><i>-C<j>` (or all `contactName`).
    static func putTrees(_ count: Int, prefix: String, contacts: Int = 3, contactName: String? = nil, bench: SyncHarness,
                         _ pipeline: PipelineDefinition) async throws {
        var accounts: [JSONObject] = []
        var children: [JSONObject] = []
        for index in 0..<count {
            accounts.append(SyncHarness.local("Account", "local_\(prefix)\(index)", ["Name": .string("\(prefix)\(index)")]))
            for child in 0..<contacts {
                children.append(SyncHarness.local("Contact", "local_\(prefix)\(index)_\(child)", [
                    "LastName": .string(contactName ?? "\(prefix)\(index)-C\(child)"), "AccountId": .string("local_\(prefix)\(index)"),
                ]))
            }
        }
        try await bench.put(accounts, into: "Accounts", pipeline)
        try await bench.put(children, into: "Contacts", pipeline)
    }

    /// The org and the soups agree exactly on the trees `<prefix>0…<prefix>(count-1)`.
    static func expectExact(_ count: Int, prefix: String, contacts: Int = 3, bench: SyncHarness, _ pipeline: PipelineDefinition,
                            sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let accounts = try await bench.query("SELECT Id, Name FROM Account WHERE Name LIKE '\(prefix)%'")
        #expect(accounts.count == count, "accounts in the org, each once", sourceLocation: sourceLocation)
        let accountIds = Dictionary(accounts.map { ($0["Name"]!.stringValue!, $0["Id"]!.stringValue!) }, uniquingKeysWith: { $1 })
        #expect(accountIds.count == count, "no duplicate account", sourceLocation: sourceLocation)
        let orgContacts = try await bench.query("SELECT Id, LastName, AccountId FROM Contact WHERE Account.Name LIKE '\(prefix)%'")
        #expect(orgContacts.count == count * contacts, "contacts in the org, each once", sourceLocation: sourceLocation)
        var perAccount: [String: Int] = [:]
        for contact in orgContacts { perAccount[contact["AccountId"]?.stringValue ?? "", default: 0] += 1 }
        #expect(perAccount.values.allSatisfy { $0 == contacts }, "every account has its own contacts", sourceLocation: sourceLocation)

        let accountEntries = try await bench.entries("Accounts", pipeline).filter { $0["Name"]?.stringValue?.hasPrefix(prefix) == true }
        let contactEntries = try await bench.entries("Contacts", pipeline).filter { entry in
            accountEntries.contains { $0["Id"] == entry["AccountId"] } || entry["AccountId"]?.stringValue?.hasPrefix("local_\(prefix)") == true
        }
        #expect(accountEntries.count == count && contactEntries.count == count * contacts, sourceLocation: sourceLocation)
        let all = accountEntries + contactEntries
        #expect(all.allSatisfy { !$0.isDirty }, "nothing left dirty: \(all.filter(\.isDirty).map { $0[SyncField.lastError] ?? .null })",
                sourceLocation: sourceLocation)
        #expect(all.allSatisfy { !SyncField.isLocalId($0["Id"]?.stringValue ?? "local_") }, "no local id left", sourceLocation: sourceLocation)
        #expect(Set(all.compactMap { $0["Id"]?.stringValue }).count == all.count, "no two entries share an id", sourceLocation: sourceLocation)
        for account in accountEntries {
            #expect(account["Id"]?.stringValue == accountIds[account["Name"]?.stringValue ?? ""], sourceLocation: sourceLocation)
        }
        let orgById = Dictionary(orgContacts.map { ($0["Id"]!.stringValue!, $0) }, uniquingKeysWith: { $1 })
        for contact in contactEntries {
            let org = orgById[contact["Id"]?.stringValue ?? ""]
            #expect(org != nil && org?["AccountId"] == contact["AccountId"], "the soup's parent link is the org's", sourceLocation: sourceLocation)
            #expect(org?["LastName"] == contact["LastName"], sourceLocation: sourceLocation)
        }
    }

    static func created(_ outcome: RunOutcome) -> Int { outcome.report.stages[0].counts["created"] ?? 0 }

    /// Waits until the org holds `count` Accounts: the write a stop left at the org commits there
    /// (however loaded the machine, well within the org's 30 s deadline), so the next run finds
    /// its records and adopts them. Gives up after 30 s, for the run's own checks to report.
    static func waitForOrg(toHold count: Int, accountsIn bench: SyncHarness) async throws {
        let giveUp = ContinuousClock.now + .seconds(30)
        while try await orgCount("Account", bench) < count && ContinuousClock.now < giveUp {
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// How many records of `object` the org holds (its stats).
    static func orgCount(_ object: String, _ bench: SyncHarness) async throws -> Int {
        Int(await bench.stats()["records"]?[object]?.integerValue ?? 0)
    }

    @Test(arguments: ["auto", "composite", "graph", "perTree"])
    func droppedAnswersEndExact(strategy: String) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages(strategy))
        try await Self.putTrees(40, prefix: "D", bench: bench, pipeline)
        try await bench.setFaults(["dropAfterCommitRate": 0.3, "seed": 11])
        let first = try await bench.run(pipeline)
        #expect([0, 3].contains(first.exitCode), "\(first.report.stages[0])")
        try await bench.setFaults([:])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        #expect(Self.created(first) + Self.created(second) == 160, "each record counted created once")
        try await Self.expectExact(40, prefix: "D", bench: bench, pipeline)
    }

    /// The org's clock a day ahead of ours: lost answers are still found where the org dated them
    /// (the journal's windows are on the org's clock, read from its `Date` headers).
    @Test func lostAnswersAreFoundWhenTheOrgsClockIsAhead() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        bench.advanceClock(seconds: 86_400)
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections"))
        try await Self.putTrees(4, prefix: "T", contacts: 2, bench: bench, pipeline)
        try await bench.setFaults(["dropAfterCommitRate": 1.0])
        let first = try await bench.run(pipeline)
        try await bench.setFaults([:])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(first.report.stages[0]) \(second.report.stages[0])")
        #expect(Self.created(first) + Self.created(second) == 12, "each record counted created once")
        try await Self.expectExact(4, prefix: "T", contacts: 2, bench: bench, pipeline)
    }

    /// Stopped (SIGINT / SIGTERM) while a request is in flight: the stage reports those records
    /// (uncertain, or created if the answer won the race) — not nothing — keeps their journal, and
    /// the next run settles them exactly.
    @Test func aStopWhileARequestIsInFlightReportsIt() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections"))
        try await Self.putTrees(4, prefix: "Z", contacts: 1, bench: bench, pipeline)
        let accountsBefore = try await Self.orgCount("Account", bench)
        // The write commits 1.5 s after it arrives; the run is stopped as soon as the org has it.
        try await bench.setFaults(["writeLatencyMs": 1500])
        let observer = StopOnceTheOrgHasTheWrite(org: bench.org)
        let first = try await SyncDownResumeTests.run(pipeline, in: bench, observer: observer, control: observer.control)
        #expect(first.exitCode == 143)
        let counts = first.report.stages[0].counts
        #expect((counts["uncertain"] ?? 0) + (counts["created"] ?? 0) == 8,
                "the accounts in flight and the contacts waiting on them are reported: \(first.report.stages[0])")
        try await bench.setFaults([:])
        try await Self.waitForOrg(toHold: accountsBefore + 4, accountsIn: bench)
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        #expect(Self.created(first) + Self.created(second) == 8)
        try await Self.expectExact(4, prefix: "Z", contacts: 1, bench: bench, pipeline)
    }

    /// Stopped while the first request of a page in three parts is at the org: the parts leave
    /// together, so with one request in flight at a time the requests waiting for their turn
    /// never leave (one write reaches the org), and with eight all three are in flight. Either
    /// way the run reports stopped, and the next run settles what was in flight and sends the
    /// rest — each record once.
    @Test(arguments: [(1, 1, 160), (8, 3, 330)])
    func aStopWhileAPageIsInPartsSendsNoFurtherRequest(maxInFlight: Int, writes: Int, trees: Int) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections", maxInFlight: maxInFlight))
        // 330 trees of 1 + 5: three requests of 160, 160 and 10 trees, so three parts.
        try await Self.putTrees(330, prefix: "P", contacts: 5, bench: bench, pipeline)
        let accountsBefore = try await Self.orgCount("Account", bench)
        try await bench.setFaults(["writeLatencyMs": 1500])
        let observer = StopOnceTheOrgHasTheWrite(org: bench.org)
        let first = try await SyncDownResumeTests.run(pipeline, in: bench, observer: observer, control: observer.control)
        #expect(first.exitCode == 143 && first.report.stages[0].status != .succeeded, "\(first.report.stages[0])")
        let stats = await bench.stats()
        #expect(stats["requests"]?["writes"]?.integerValue == Int64(writes), "no request left after the stop: \(stats)")
        #expect(try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "trees").status == .stopped)
        try await bench.setFaults([:])
        try await Self.waitForOrg(toHold: accountsBefore + trees, accountsIn: bench)
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        #expect(Self.created(first) + Self.created(second) == 330 * 6)
        try await Self.expectExact(330, prefix: "P", contacts: 5, bench: bench, pipeline)
    }

    @Test(arguments: ["composite", "collections"])
    func aChildIsNeverTakenFromAnotherTree(strategy: String) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages(strategy))
        // An identical contact already in the org, under another account, created moments before.
        let other = try await bench.serverRecord("Account", ["Name": "Other of M"])
        let lookalike = try await bench.serverRecord("Contact", ["LastName": "Same", "AccountId": other["Id"]!])
        try await Self.putTrees(2, prefix: "M", contacts: 1, contactName: "Same", bench: bench, pipeline)
        try await bench.setFaults(["dropAfterCommitRate": 1.0])
        let first = try await bench.run(pipeline)
        try await bench.setFaults([:])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(first.report.stages[0]) \(second.report.stages[0])")
        let sames = try await bench.query("SELECT Id, AccountId FROM Contact WHERE LastName = 'Same'")
        #expect(sames.count == 3, "two created, the lookalike untouched")
        #expect(sames.contains { $0["Id"] == lookalike["Id"] && $0["AccountId"] == other["Id"] })
        let entries = try await bench.entries("Contacts", pipeline).filter { $0["LastName"] == "Same" }
        #expect(!entries.contains { $0["Id"] == lookalike["Id"] }, "the lookalike is never adopted")
        try await Self.expectExact(2, prefix: "M", contacts: 1, bench: bench, pipeline)
    }

    /// A write still running in the org when the client gave up is not sent again until the org
    /// can no longer apply it; then it is found (applied: held 10 s of a 30 s deadline) or sent
    /// (stopped at a 3 s deadline while held for 60 s). The org's clock is moved, not waited for.
    @Test(arguments: [(30, 10), (3, 60)])
    func aTimedOutWriteIsDecidedOnlyAfterTheOrgsDeadline(deadlineSeconds: Int, spikeSeconds: Int) async throws {
        let bench = try await SyncHarness(requestDeadlineSeconds: Double(deadlineSeconds))
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections"),
                                          org: #""timeoutSeconds": 0.5, "requestDeadlineSeconds": \#(deadlineSeconds), "#)
        try await Self.putTrees(5, prefix: "S", contacts: 2, bench: bench, pipeline)
        try await bench.setFaults(["latencySpikeMs": .integer(Int64(spikeSeconds * 1000)), "latencySpikeRate": 1.0])
        let first = try await bench.run(pipeline)
        #expect(first.exitCode == 3, "uncertain, not guessed: \(first.report.stages[0])")
        #expect(first.report.stages[0].counts["uncertain"] == 15)
        try await bench.setFaults([:])
        // The held write ends (applied inside its deadline, or stopped past it), then the
        // client's settle window passes: the org's own deadline decides whether the write ran.
        await bench.letTimePass(seconds: spikeSeconds)
        let applied = try await bench.query("SELECT Id FROM Account WHERE Name IN ('S0', 'S1', 'S2', 'S3', 'S4')")
        #expect(applied.count == (deadlineSeconds > spikeSeconds ? 5 : 0), "held \(spikeSeconds) s against a \(deadlineSeconds) s deadline")
        await bench.letTimePass(seconds: deadlineSeconds + 5)
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        #expect(Self.created(second) == 15)
        try await Self.expectExact(5, prefix: "S", contacts: 2, bench: bench, pipeline)
    }

    /// The sync with accounts upserted by `External_Id__c`.
    static let syncWithExternalId = sync
        .replacingOccurrences(of: #""soupName": "Accounts" },"#, with: #""soupName": "Accounts", "externalIdFieldName": "External_Id__c" },"#)
        .replacingOccurrences(of: #""createFieldlist": ["Name"]"#, with: #""createFieldlist": ["Name", "External_Id__c"]"#)

    /// Gives every account entry the external id `EXT-<Name>`.
    static func setExternalIds(_ pipeline: PipelineDefinition) async throws {
        let store = try SoupStore(path: pipeline.store)
        var accounts = try await store.entries(in: "Accounts", limit: 100_000)
        for index in accounts.indices { accounts[index]["External_Id__c"] = .string("EXT-\(accounts[index]["Name"]!.stringValue!)") }
        _ = try await store.upsert(accounts, into: "Accounts")
        try store.close()
    }

    /// A parent upsert the client gave up on, still running on the org, has not created its
    /// record *yet*: its children, sent with it, must wait for the org's deadline instead of being
    /// sent again in the same run (they were, and the org then held each contact twice).
    @Test func aTimedOutUpsertHoldsItsChildrenUntilTheOrgsDeadline() async throws {
        let bench = try await SyncHarness(requestDeadlineSeconds: 30)
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.syncWithExternalId, stages: Self.stages("composite"),
                                          org: #""timeoutSeconds": 0.5, "requestDeadlineSeconds": 30, "#)
        try await Self.putTrees(5, prefix: "U", contacts: 2, bench: bench, pipeline)
        try await Self.setExternalIds(pipeline)
        try await bench.setFaults(["latencySpikeMs": 10_000, "latencySpikeRate": 1.0])
        let first = try await bench.run(pipeline)
        #expect(first.exitCode == 3, "uncertain, not guessed: \(first.report.stages[0])")
        #expect(first.report.stages[0].counts["uncertain"] == 15)
        try await bench.setFaults([:])
        // The held upsert is applied inside the org's deadline; then the settle window passes.
        await bench.letTimePass(seconds: 10)
        await bench.letTimePass(seconds: 35)
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        #expect(Self.created(first) + Self.created(second) == 15)
        try await Self.expectExact(5, prefix: "U", contacts: 2, bench: bench, pipeline)
    }

    /// Upserts whose every answer was lost (the client retried, then gave up) were applied: sent
    /// again, they match their own first attempt, which is a create, not an update of a record
    /// the org already had — counted created once across the runs, never updated.
    @Test(arguments: ["collections", "composite"])
    func anUpsertThatMatchesItsOwnLostAttemptCountsCreated(strategy: String) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.syncWithExternalId, stages: Self.stages(strategy))
        try await Self.putTrees(6, prefix: "M", contacts: 2, bench: bench, pipeline)
        try await Self.setExternalIds(pipeline)
        try await bench.setFaults(["dropAfterCommitRate": 1.0])
        let first = try await bench.run(pipeline)
        try await bench.setFaults([:])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        let counts = [first, second].map(\.report.stages[0].counts)
        #expect(counts.map { $0["created"] ?? 0 }.reduce(0, +) == 18, "\(counts)")
        #expect(counts.allSatisfy { ($0["updated"] ?? 0) == 0 }, "\(counts)")
        try await Self.expectExact(6, prefix: "M", contacts: 2, bench: bench, pipeline)
    }

    /// A lost write is "not applied" only if the lookup that missed it ran after the org's
    /// deadline. Here the lookup runs while the write is still queued in the org, and its answer
    /// is read after the deadline: the run must not take that miss as final (it did, and sent the
    /// tree again: every contact twice).
    @Test func aLookupRunBeforeTheDeadlineDecidesNothingHoweverLateItsAnswer() async throws {
        let bench = try await SyncHarness(requestDeadlineSeconds: 10)
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.syncWithExternalId, stages: Self.stages("composite"),
                                          org: #""timeoutSeconds": 0.5, "requestDeadlineSeconds": 10, "#)
        try await Self.putTrees(2, prefix: "K", contacts: 2, bench: bench, pipeline)
        try await Self.setExternalIds(pipeline)
        // The write commits 5 s after it arrives, long after the client gave up (0.5 s), inside
        // the org's deadline (10 s); the lookup that follows runs at once and is read 14 s later.
        try await bench.setFaults(["writeLatencyMs": 5000])
        // Query answers arrive late (a slow network, a busy machine): what a query saw is older
        // than the moment its answer is read. The write commits meanwhile, and the client's
        // settle window passes.
        let first = try await bench.run(pipeline) { client in
            InterceptingClient(base: client) { request, send in
                let response = try await send()
                if request.kind == "query" {
                    await bench.letTimePass(seconds: 5)
                    bench.advanceClock(seconds: 9)
                }
                return response
            }
        }
        try await bench.setFaults([:])
        var created = Self.created(first)
        var last = first
        for _ in 0..<2 where last.exitCode != 0 {
            last = try await bench.run(pipeline)
            created += Self.created(last)
        }
        #expect(last.exitCode == 0, "\(first.report.stages[0]) → \(last.report.stages[0])")
        #expect(created == 6)
        try await Self.expectExact(2, prefix: "K", contacts: 2, bench: bench, pipeline)
    }

    /// Collections calls travel 5 to a Composite request, each tree whole in one request:
    /// 400 trees of 1 + 5 records take 3 requests (160 trees fill 1 call of accounts and 4 of
    /// contacts), not 12 plain Collections requests.
    @Test func collectionsArePackedIntoCompositeRequests() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections"))
        try await Self.putTrees(400, prefix: "P", contacts: 5, bench: bench, pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.api.byKind["composite"] == 3 && outcome.report.api.byKind["collections"] == nil,
                "\(outcome.report.api.byKind)")
        #expect(Self.created(outcome) == 2400)
        try await Self.expectExact(400, prefix: "P", contacts: 5, bench: bench, pipeline)
    }

    /// A parent the org refuses fails its own children, in the same Composite request; the
    /// other trees' children, whose call the org refused whole for that one reference, are sent
    /// again in the same run with their parents' ids — not failed, not duplicated.
    @Test func aRefusedParentFailsOnlyItsOwnChildren() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections"))
        try await Self.putTrees(5, prefix: "R", contacts: 2, bench: bench, pipeline)
        let store = try SoupStore(path: pipeline.store)
        var accounts = try await store.entries(in: "Accounts", limit: 100)
        let bad = try #require(accounts.firstIndex { $0["Name"] == "R2" })
        accounts[bad]["Name"] = .string(String(repeating: "R", count: 300))  // longer than Account.Name allows
        _ = try await store.upsert(accounts, into: "Accounts")
        try store.close()
        let outcome = try await bench.run(pipeline)
        let stage = outcome.report.stages[0]
        #expect(stage.byObject["Account"]?["created"] == 4 && stage.byObject["Account"]?["failed"] == 1, "\(stage)")
        #expect(stage.byObject["Contact"]?["created"] == 8 && stage.byObject["Contact"]?["failed"] == 2, "\(stage)")
        let contacts = try await bench.entries("Contacts", pipeline)
        let errors = contacts.compactMap { $0[SyncField.lastError]?.stringValue }
        #expect(errors.count == 2 && errors.allSatisfy { $0.contains("PARENT_NOT_SYNCED") }, "\(errors)")
        #expect(try await bench.query("SELECT Id FROM Contact WHERE Account.Name LIKE 'R%'").count == 8)
        #expect(outcome.report.api.byKind["composite"] == 2, "the first request, then the halted children again: \(outcome.report.api.byKind)")
    }

    /// The daily limit stops the run: what the org committed is kept, counted and listed; the
    /// next run sends only the rest.
    @Test func theDailyLimitKeepsWhatWasCommitted() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections", maxInFlight: 1))
        try await Self.putTrees(1000, prefix: "L", contacts: 1, bench: bench, pipeline)
        let stats = await bench.stats()
        let used = stats["dailyRequests"]?.integerValue ?? 0
        // Two Composite requests of Collections get through (400 trees each: two calls of 200
        // accounts, two of their contacts), the third meets the limit.
        try await bench.setFaults(["dailyRequestLimit": .integer(used + 2)])
        let first = try await bench.run(pipeline)
        try await bench.setFaults([:])
        #expect(first.exitCode == 1)
        #expect(Self.created(first) == 1600, "\(first.report.stages[0])")
        let inOrg = try await bench.query("SELECT Id FROM Account WHERE Name LIKE 'L%'").count
            + (try await bench.query("SELECT Id FROM Contact WHERE Account.Name LIKE 'L%'").count)
        #expect(inOrg == 1600, "the report agrees with the org")
        let success = try String(contentsOfFile: (first.report.reportDir as NSString).appendingPathComponent("Account-success.csv"), encoding: .utf8)
        #expect(success.components(separatedBy: "\r\n").filter { $0.hasPrefix("up,create,") }.count == 800)
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        #expect(Self.created(second) == 400)
        try await Self.expectExact(1000, prefix: "L", contacts: 1, bench: bench, pipeline)
    }

    /// The daily limit stops a LEAVE_IF_CHANGED run: what the org committed is saved with the dates
    /// its requests read back (new parents) or held as created (new children) — never with
    /// neither, which would let a later change in the org be overwritten.
    @Test func aStoppedPageKeepsItsDates() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync.replacingOccurrences(of: "OVERWRITE", with: "LEAVE_IF_CHANGED"),
                                          stages: Self.stages("collections", maxInFlight: 1))
        try await Self.putTrees(1000, prefix: "D", contacts: 1, bench: bench, pipeline)
        let used = await bench.stats()["dailyRequests"]?.integerValue ?? 0
        try await bench.setFaults(["dailyRequestLimit": .integer(used + 2)])
        let first = try await bench.run(pipeline)
        try await bench.setFaults([:])
        #expect(first.exitCode == 1 && Self.created(first) > 0 && Self.created(first) < 2000, "\(first.report.stages[0])")
        let accounts = try await bench.entries("Accounts", pipeline).filter { !$0.isDirty }
        let contacts = try await bench.entries("Contacts", pipeline).filter { !$0.isDirty }
        #expect(accounts.count + contacts.count == Self.created(first))
        #expect(!accounts.isEmpty && accounts.allSatisfy { $0["LastModifiedDate"] != nil && !$0.isAsCreated(dateField: "LastModifiedDate") })
        #expect(!contacts.isEmpty && contacts.allSatisfy { $0.isAsCreated(dateField: "LastModifiedDate") })
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0 && Self.created(first) + Self.created(second) == 2000, "\(second.report.stages[0])")
        try await Self.expectExact(1000, prefix: "D", contacts: 1, bench: bench, pipeline)
    }

    /// The same for records sent one request each (a page in parts that wait for each other):
    /// the request that meets the limit stops its part after others of it were created.
    @Test(arguments: [7, 12]) func aStoppedPageOfSingleRequestsKeepsItsNewRecordsAsCreated(limit: Int) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "rest" },
                "options": { "mergeMode": "LEAVE_IF_CHANGED", "fieldlist": ["Name"] } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "up", "maxInFlight": 1 } ]"#)
        try await bench.put((0..<20).map { SyncHarness.local("Account", "local_\($0)", ["Name": .string("Single \($0)")]) }, into: "Accounts", pipeline)
        let used = await bench.stats()["dailyRequests"]?.integerValue ?? 0
        try await bench.setFaults(["dailyRequestLimit": .integer(used + Int64(limit))])
        let first = try await bench.run(pipeline)
        try await bench.setFaults([:])
        let saved = try await bench.entries("Accounts", pipeline).filter { !$0.isDirty }
        #expect(first.exitCode == 1 && !saved.isEmpty && saved.count == Self.created(first), "\(first.report.stages[0])")
        #expect(saved.allSatisfy { $0.isAsCreated(dateField: "LastModifiedDate") }, "\(saved.map { $0["Name"] ?? .null })")
    }

    /// A spent API budget in the middle of a page sent in parts: the part that meets it stops the
    /// page, the part after it never leaves, and the next run sends the rest — each record once.
    @Test func aSpentBudgetKeepsThePartsAfterItFromLeaving() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections", maxInFlight: 1))
        // 1,000 trees of 1 + 1: three requests (400, 400 and 200 trees), so three parts.
        try await Self.putTrees(1000, prefix: "B", contacts: 1, bench: bench, pipeline)
        let used = await bench.stats()["dailyRequests"]?.integerValue ?? 0
        try await bench.setFaults(["dailyRequestLimit": .integer(used + 1)])
        let first = try await bench.run(pipeline)
        let sent = (await bench.stats()["dailyRequests"]?.integerValue ?? 0) - used
        try await bench.setFaults([:])
        #expect(first.exitCode == 1)
        #expect(Self.created(first) == 800, "the first part only: \(first.report.stages[0])")
        #expect(sent >= 1 && sent <= 2, "the first part, perhaps the second (refused), never the third: \(sent) request(s)")
        #expect(first.report.stages[0].error?.contains("daily API request limit") == true,
                "the part that met the limit names it, not the parts it stopped: \(first.report.stages[0].error ?? "")")
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        #expect(Self.created(second) == 1200)
        try await Self.expectExact(1000, prefix: "B", contacts: 1, bench: bench, pipeline)
    }

    /// Row-lock and busy answers applied nothing: they are retried, never called uncertain.
    @Test func lockBurstsAreRetriedNotUncertain() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("collections", maxInFlight: 1))
        try await Self.putTrees(60, prefix: "K", contacts: 2, bench: bench, pipeline)
        try await bench.setFaults(["recordErrorRate": 0.1, "recordErrorCode": "UNABLE_TO_LOCK_ROW", "errorRate": 0.2, "errorBurst": 6,
                                   "errorStatus": 503, "errorCode": "SERVER_UNAVAILABLE", "seed": 5])
        let first = try await bench.run(pipeline)
        #expect(first.report.stages[0].counts["uncertain"] == 0, "\(first.report.stages[0])")
        try await bench.setFaults([:])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(second.report.stages[0])")
        #expect(Self.created(first) + Self.created(second) == 180)
        try await Self.expectExact(60, prefix: "K", contacts: 2, bench: bench, pipeline)
    }

    /// A record refused with a row lock and sent again, whose second answer is lost, leaves one
    /// attempt to reconcile, not two: the refused attempt's journal entry goes with the page (two
    /// entries for one record used to claim the same org record and hold it back forever).
    @Test(arguments: [3, 11, 19])
    func aRetriedRecordWhoseAnswerIsLostIsAdopted(seed: Int) async throws {
        let bench = try await SyncHarness(requestDeadlineSeconds: 1.5)
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("composite", maxInFlight: 1),
                                          org: #""timeoutSeconds": 1, "requestDeadlineSeconds": 1.5, "#)
        try await Self.putTrees(40, prefix: "R", contacts: 2, bench: bench, pipeline)
        try await bench.setFaults(["recordErrorRate": 0.3, "recordErrorCode": "UNABLE_TO_LOCK_ROW", "dropAfterCommitRate": 0.4,
                                   "seed": .integer(Int64(seed))])
        let first = try await bench.run(pipeline)
        try await bench.setFaults([:])
        // A lost write none of whose records the org holds is decided once its deadline has passed.
        await bench.letTimePass(seconds: 5)
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(first.report.stages[0]) → \(second.report.stages[0])")
        #expect(Self.created(first) + Self.created(second) == 120)
        try await Self.expectExact(40, prefix: "R", contacts: 2, bench: bench, pipeline)
    }

    /// Children whose parent is in no soup are reported, so the run is never a success while they wait.
    @Test func strandedChildrenMakeTheRunPartial() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages("auto"))
        try await bench.put([SyncHarness.local("Contact", "local_orphan", ["LastName": "Orphan", "AccountId": "local_gone"])], into: "Contacts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 3)
        #expect(outcome.report.stages[0].counts["failed"] == 1)
        let entry = try await bench.entries("Contacts", pipeline).first { $0["LastName"] == "Orphan" }
        #expect(entry?.isDirty == true && entry?.lastErrorCode == "UNRESOLVED_REFERENCE")
    }
}

/// Stops the run (SIGTERM's exit code) as soon as the org has received the sync up's first write.
private final class StopOnceTheOrgHasTheWrite: RunObserver {
    let control = RunControl()
    let org: TestOrg
    init(org: TestOrg) { self.org = org }
    func handle(_ event: RunEvent, at date: Date) {
        guard case .progress(_, "trees"?, "RUNNING", 0, let total) = event, total > 0 else { return }
        Task { [control, org] in
            for _ in 0..<500 {
                if await org.writes() >= 1 { break }
                try? await Task.sleep(for: .milliseconds(20))
            }
            control.requestStop(exitCode: 143)
        }
    }
}
