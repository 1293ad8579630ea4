import Foundation
import JSON
import Soups
import Stages
import Testing

@Suite struct PipelineLoaderTests {
    let soupsAndSyncs = """
        "soups": [{"soupName": "AccountSoup", "indexes": [{"path": "Id", "type": "string"}]}],
        "syncs": [{"syncName": "Down", "syncType": "syncDown", "soupName": "AccountSoup",
                   "target": {"type": "soql", "query": "SELECT Id FROM Account"}}],
        """

    @Test func loadsAValidPipelineWithAbsolutePaths() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "name": "p", "store": "state/p.sqlite", \(soupsAndSyncs)
              "stages": [ { "id": "a", "type": "test.count", "count": 3, "soup": "AccountSoup", "sync": "Down" },
                          { "id": "b", "type": "test.count", "from": "a" },
                          { "id": "r", "type": "report", "dir": "out", "after": ["b"] } ] }
            """, in: directory)
        #expect(pipeline.name == "p")
        #expect(pipeline.store == URL(fileURLWithPath: directory).appendingPathComponent("state/p.sqlite").standardizedFileURL.path)
        #expect(pipeline.stages.map(\.id) == ["a", "b", "r"])
        #expect(pipeline.stage("b")?.from == ["a"])
        #expect(pipeline.stage("r")?.after == ["b"])
        #expect((pipeline.stage("r")?.stage as? ReportStage)?.directory?.hasSuffix("/out") == true)
        #expect(pipeline.soups.map(\.name) == ["AccountSoup"])
        #expect(pipeline.syncs.first?.targetName == "soql")
    }

    @Test func defaultStoreIsBesideThePipeline() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline(#"{"name": "n", "stages": []}"#, in: directory)
        #expect(pipeline.store.hasSuffix("/.pipeline/n.sqlite"))
    }

    @Test func syntaxErrorHasLineAndColumn() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("{\n  \"name\": \"x\",\n  \"stages\": [,]\n}", in: directory)
        #expect(errors == ["line 3, column 14: unexpected ',', expected a value"])
    }

    @Test func reportsEveryErrorWithItsPath() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("""
            { "name": "x", "extra": 1, \(soupsAndSyncs)
              "stages": [
                { "id": "a", "type": "nope" },
                { "id": "b", "type": "test.count", "count": "3", "flag": "false", "soup": "Missing", "sync": "Nope", "bogus": 1 },
                { "id": "b", "type": "report" },
                { "id": "c", "type": "test.count", "from": "zzz", "after": ["a", "qq"] },
                { "type": "report" },
                { "id": "d", "type": 5 }
              ] }
            """, in: directory)
        #expect(errors.contains("extra: unknown key; expected one of description, dryRun, name, org, soups, stages, store, syncs"))
        #expect(errors.contains(#"stages[0].type: unknown stage type "nope"; known types: cleanGhosts, extract.csv, extract.soql, extract.xml, markDirty, report, resync, stage, syncDown, syncUp, test.count, test.customSyncUp, transform"#))
        #expect(errors.contains(#"stages[1].count: must be an integer from 0 to 1000000, not "3""#))
        #expect(errors.contains(#"stages[1].flag: must be a boolean (true or false without quotes), not string "false""#))
        #expect(errors.contains(#"stages[1].soup: no soup named "Missing"; known soups: AccountSoup"#))
        #expect(errors.contains(#"stages[1].sync: no sync named "Nope"; known: Down"#))
        #expect(errors.contains("stages[1].bogus: unknown key for a stage of this type"))
        #expect(errors.contains(#"stages[2].id: duplicate stage id "b" (also stages[1])"#))
        #expect(errors.contains(#"stages[3].from: no stage with id "zzz"; known ids: a, b, c, d"#))
        #expect(errors.contains(#"stages[3].after[1]: no stage with id "qq"; known ids: a, b, c, d"#))
        #expect(errors.contains("stages[4].id: is required"))
        #expect(errors.contains("stages[5].type: must be a string, not integer"))
    }

    @Test func cyclesAreReportedWithTheirPath() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("""
            { "stages": [ { "id": "a", "type": "test.count", "after": ["c"] },
                          { "id": "b", "type": "test.count", "from": "a" },
                          { "id": "c", "type": "test.count", "from": "b" },
                          { "id": "d", "type": "test.count", "after": "d" } ] }
            """, in: directory)
        #expect(errors.contains("stages[0]: the stages form a cycle: a → b → c → a"))
        #expect(errors.contains("stages[3].after: a stage cannot depend on itself"))
    }

    @Test func variablesAreResolvedAndUnsetOnesReported() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "name": "${NAME}-x", "stages": [ { "id": "r", "type": "report", "dir": "$${LITERAL}/${SUB}" } ] }
            """, in: directory, variables: ["NAME": "nightly", "SUB": "reports"])
        #expect(pipeline.name == "nightly-x")
        #expect((pipeline.stage("r")?.stage as? ReportStage)?.directory?.hasSuffix("/${LITERAL}/reports") == true)

        let errors = loadErrors(#"{ "name": "${A}", "stages": [ { "id": "r", "type": "report", "dir": "${B}" } ] }"#, in: directory)
        #expect(errors == [
            "name: variable ${A} is not set (use --var A=…, --var-file, or the environment)",
            "stages[0].dir: variable ${B} is not set (use --var B=…, --var-file, or the environment)",
        ])
    }

    @Test func secretsMustBeVariablesAndAreCollectedForRedaction() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let literal = loadErrors("""
            { "org": { "instanceUrl": "https://x.my.salesforce.com",
                       "auth": { "flow": "password", "username": "u", "password": "hunter2", "clientId": "c" } },
              "stages": [] }
            """, in: directory)
        #expect(literal == ["org.auth.password: a secret must be exactly one ${VAR} reference, never a literal value (pass it with --var-file or the environment)"])

        let pipeline = try loadPipeline("""
            { "org": { "loginUrl": "https://login.salesforce.com",
                       "auth": { "flow": "password", "username": "u", "password": "${PW}", "clientId": "c", "clientSecret": "${CS}" } },
              "stages": [] }
            """, in: directory, variables: ["PW": "s3cret-pass", "CS": "client-secret-1"])
        #expect(Set(pipeline.secrets) == ["s3cret-pass", "client-secret-1"])
        guard case .remote(let settings) = pipeline.org, case .password(_, let password, _, _, _) = settings.auth else {
            Issue.record("expected a password flow")
            return
        }
        #expect(password == "s3cret-pass")

        let badFlow = loadErrors(#"{ "org": { "auth": { "flow": "magic" } }, "stages": [] }"#, in: directory)
        #expect(badFlow == ["org.auth.flow: must be one of password, refresh_token, client_credentials, jwt, access_token, sfdx_auth_url"])
    }

    @Test func emulatorOrgDefaultsItsDatabaseBesideTheStore() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("{}", to: "seed.json", in: directory)
        let pipeline = try loadPipeline(#"{ "store": "s.sqlite", "org": { "emulator": { "seed": "seed.json" } }, "stages": [] }"#, in: directory)
        guard case .emulator(let settings) = pipeline.org else {
            Issue.record("expected an emulator org")
            return
        }
        #expect(settings.database == pipeline.store + ".org.sqlite")
        #expect(settings.seed?.hasSuffix("/seed.json") == true)

        let errors = loadErrors(#"{ "org": { "emulator": { "seed": "missing.json", "port": 1 } }, "stages": [] }"#, in: directory)
        #expect(errors.contains("org.emulator.port: unknown key; expected seed, database or faults"))
        #expect(errors.contains { $0.hasPrefix("org.emulator.seed: no such file: ") })
    }

    @Test func mobileSDKFilesAreReadAsAppsWriteThem() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../samples").standardizedFileURL.path
        let pipeline = try loadPipeline("""
            { "soups": "\(samples)/userstore.json", "syncs": "\(samples)/usersyncs.json", "stages": [] }
            """, in: directory)
        #expect(pipeline.soups.map(\.name) == ["ContactSoup", "AccountSoup"])
        #expect(pipeline.soups[1].index(forPath: "Description")?.type == .fullText)
        let up = try #require(pipeline.syncs.first { $0.name == "UpSync" })
        // "type": "rest" with SFParentChildrenSyncUpTarget is a parent-children sync up (SPEC §3).
        #expect(StageRegistry.builtIn.syncUpTarget(named: up.targetName ?? "")?.name == "parent_children")
        #expect(up.options["mergeMode"] == "LEAVE_IF_CHANGED")
        #expect(pipeline.warnings.map(\.description).contains { $0.hasSuffix("usersyncs.json: syncs[1].target.parentUpdateFieldlist: key repeated (line 61); the last value is used") })
    }

    @Test func syncTargetClassFollowsImplThenType() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "soups": [{"soupName": "S", "indexes": []}],
              "syncs": [
                {"syncName": "a", "syncType": "syncUp", "soupName": "S", "target": {"androidImpl": "com.x.BatchSyncUpTarget"}},
                {"syncName": "b", "syncType": "syncUp", "soupName": "S", "target": {"iOSImpl": "SFSyncUpTarget", "type": "batch"}},
                {"syncName": "c", "syncType": "syncUp", "soupName": "S", "target": {}},
                {"syncName": "d", "syncType": "syncUp", "soupName": "S", "target": {"type": "batch"}, "unused": 1}
              ],
              "stages": [] }
            """, in: directory)
        #expect(pipeline.syncs.map { StageRegistry.builtIn.syncUpTarget(named: $0.targetName ?? "")?.name } == ["batch", "rest", "collection", "batch"])
        #expect(pipeline.warnings.map { "\($0.location): \($0.message)" } == ["syncs[3].unused: key not used by SyncPipeline; ignored"])
    }

    @Test func badMobileSDKFilesAreErrorsWithTheirPlace() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write(#"{"soups": [{"soupName": "S", "indexes": [{"path": "Id", "type": "text"}]}]}"#, to: "userstore.json", in: directory)
        try write(#"{"syncs": [{"syncName": "x", "syncType": "sideways", "soupName": "S", "target": {}}]}"#, to: "usersyncs.json", in: directory)
        let errors = loadErrors(#"{ "soups": "userstore.json", "syncs": "usersyncs.json", "stages": [] }"#, in: directory)
        #expect(errors == [
            #"soups[0].indexes[0].type: must be one of "string", "integer", "floating", "full_text", "json1""#,
            #"syncs[0].syncType: must be "syncDown" or "syncUp""#,
        ])
    }

    /// A target's key under `options` would be ignored — an external id upsert silently becoming
    /// a create that then fails on DUPLICATE_VALUE: an error at its place.
    @Test func aTargetKeyUnderOptionsIsAnError() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors(#"""
            { "soups": [ { "soupName": "S", "indexes": [ { "path": "Id", "type": "string" } ] } ],
              "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "S", "target": { "createFieldlist": ["Name"] },
                           "options": { "mergeMode": "OVERWRITE", "externalIdFieldName": "External_Id__c" } } ],
              "stages": [] }
            """#, in: directory)
        #expect(errors == ["syncs[0].options.externalIdFieldName: belongs in the sync's target, not its options (options hold mergeMode and fieldlist); here it would be ignored"])
    }
}
