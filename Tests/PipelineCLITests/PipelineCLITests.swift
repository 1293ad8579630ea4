import ChildProcesses
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import Soups
import Testing

/// End-to-end tests of the `pipeline` executable, run as a real process.
@Suite struct PipelineCLITests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL.path

    struct Result {
        var exitCode: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the built `pipeline` binary (next to this test bundle) with `arguments`.
    static func pipeline(_ arguments: [String], cwd: String? = nil, environment: [String: String] = [:]) throws -> Result {
        let binaryDirectory = Bundle.main.bundleURL.path.hasSuffix(".xctest")
            ? Bundle.main.bundleURL.deletingLastPathComponent().path
            : Bundle.main.bundleURL.path
        var binary = (binaryDirectory as NSString).appendingPathComponent("pipeline")
        if !FileManager.default.isExecutableFile(atPath: binary) {
            binary = packageRoot + "/.build/debug/pipeline"
        }
        return try spawn(binary, arguments, cwd: cwd, environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new })
    }

    /// ``pipeline(_:cwd:environment:)`` waited for on a thread of its own: a long run must not
    /// hold one of the few threads every other test's tasks (and emulators) share.
    static func pipelineInBackground(_ arguments: [String], cwd: String? = nil) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result { try pipeline(arguments, cwd: cwd) })
            }.start()
        }
    }

    /// Runs `executable` to its end (a ``ChildProcess``, not Foundation's `Process`).
    static func spawn(_ executable: String, _ arguments: [String], cwd: String?, environment: [String: String]) throws -> Result {
        let run = try ChildProcess.run(executable, arguments, environment: environment, workingDirectory: cwd)
        return Result(exitCode: run.termination.code, stdout: run.stdout, stderr: run.stderr)
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "cli-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A copy of the demo pipeline whose store lives in a fresh folder (the caller removes the folder).
    static func demoCopy() throws -> (pipeline: String, store: String) {
        let directory = try temporaryDirectory()
        let store = directory + "/demo.sqlite"
        let text = """
            { "name": "demo", "store": "\(store)", "soups": "\(packageRoot)/samples/userstore.json",
              "syncs": "\(packageRoot)/samples/usersyncs.json",
              "stages": [ { "id": "report", "type": "report", "formats": ["json", "md"] } ] }
            """
        let path = directory + "/demo.json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, store)
    }

    @Test func soupsRunsSmartSQLAndDiscardNeedsAChoice() throws {
        let demo = try Self.demoCopy()
        defer { try? FileManager.default.removeItem(atPath: (demo.store as NSString).deletingLastPathComponent) }
        #expect(try Self.pipeline(["run", demo.pipeline, "--quiet"]).exitCode == 0)
        let count = try Self.pipeline(["soups", demo.store, "--query", "SELECT COUNT(*), MAX({AccountSoup:Name}) FROM {AccountSoup}"])
        #expect(count.exitCode == 0, "\(count.stderr)")
        #expect(count.stdout == "[0,null]\n")
        let unknown = try Self.pipeline(["soups", demo.store, "--query", "SELECT {Nope:Name} FROM {Nope}"])
        #expect(unknown.exitCode == 2)
        #expect(unknown.stderr.contains("no soup named \"Nope\""))
        let write = try Self.pipeline(["soups", demo.store, "--query", "DELETE FROM {AccountSoup}"])
        #expect(write.exitCode == 2 && write.stderr.contains("only SELECT"))
        let discard = try Self.pipeline(["discard", demo.store, "AccountSoup"])
        #expect(discard.exitCode == 2 && discard.stderr.contains("--failed, --entry ID, or both"))
        let nothing = try Self.pipeline(["discard", demo.store, "AccountSoup", "--failed"])
        #expect(nothing.exitCode == 0 && nothing.stderr.contains("nothing to discard"))
    }

    @Test func validatePrintsEveryErrorAndExitsTwo() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/broken.json"
        try """
            { "name": "b", "stagez": [],
              "stages": [ { "id": "a", "type": "extract.nothing" },
                          { "id": "a", "type": "report", "formats": "pdf" },
                          { "id": "c", "type": "report", "after": ["ghost"], "dir": "${UNSET_VARIABLE_X}" } ] }
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try Self.pipeline(["validate", file])
        #expect(result.exitCode == 2)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("error: \(file): stagez: unknown key; expected one of description, dryRun, name, org, soups, stages, store, syncs"))
        #expect(lines.contains("error: \(file): stages[0].type: unknown stage type \"extract.nothing\"; known types: cleanGhosts, extract.csv, extract.soql, extract.xml, markDirty, report, resync, stage, syncDown, syncUp, transform"))
        #expect(lines.contains("error: \(file): stages[1].id: duplicate stage id \"a\" (also stages[0])"))
        #expect(lines.contains("error: \(file): stages[2].after[0]: no stage with id \"ghost\"; known ids: a, c"))
        #expect(lines.contains("error: \(file): stages[2].dir: variable ${UNSET_VARIABLE_X} is not set (use --var UNSET_VARIABLE_X=…, --var-file, or the environment)"))
        #expect(lines.count == 5)
        #expect(result.stdout.isEmpty)
    }

    @Test func validateAcceptsTheShippedPipelines() throws {
        let result = try Self.pipeline(["validate", Self.packageRoot + "/pipelines/demo.json"])
        #expect(result.exitCode == 0)
        #expect(result.stdout.contains("valid — 12 stages, 2 soups, 2 syncs"))
        for name in ["bulk-load", "nightly-sync", "migration-dry-run"] {
            let shipped = try Self.pipeline(["validate", Self.packageRoot + "/pipelines/\(name).json"])
            #expect(shipped.exitCode == 0, "\(name): \(shipped.stderr)")
            #expect(shipped.stdout.contains("valid — "), "\(name)")
        }
    }

    @Test func graphPrintsMermaid() throws {
        let result = try Self.pipeline(["graph", Self.packageRoot + "/pipelines/demo.json"])
        #expect(result.exitCode == 0)
        #expect(result.stdout.hasPrefix("---\ntitle: demo\n---\nflowchart TD\n"))
        let dot = try Self.pipeline(["graph", "--format", "dot", Self.packageRoot + "/pipelines/demo.json"])
        #expect(dot.stdout.hasPrefix("digraph \"demo\" {"))
    }

    @Test func runPrintsASummaryAndTheReportDirectoryLast() throws {
        let demo = try Self.demoCopy()
        defer { try? FileManager.default.removeItem(atPath: (demo.store as NSString).deletingLastPathComponent) }
        let result = try Self.pipeline(["run", demo.pipeline], cwd: "/")
        #expect(result.exitCode == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let reportDir = try #require(lines.last)
        #expect(reportDir.hasPrefix("/"))
        #expect(FileManager.default.fileExists(atPath: reportDir + "/report.json"))
        #expect(FileManager.default.fileExists(atPath: reportDir + "/report.md"))
        #expect(FileManager.default.fileExists(atPath: reportDir + "/run.log"))
        #expect(lines.contains { $0.hasPrefix("report") && $0.contains("succeeded") })
        #expect(result.stderr.contains("[report] started (report)"))

        let soups = try Self.pipeline(["soups", demo.store, "--json"])
        let summaries = soups.stdout.split(separator: "\n").map { try! JSONParser.parse(String($0)) }
        #expect(summaries.map { $0["soupName"]?.stringValue ?? "" } == ["AccountSoup", "ContactSoup"])
        #expect(summaries[0]["entries"] == 0)

        let syncs = try Self.pipeline(["syncs", demo.store, "--json"])
        let states = syncs.stdout.split(separator: "\n").map { try! JSONParser.parse(String($0)) }
        #expect(states.map { $0["name"]?.stringValue ?? "" } == ["DownSync", "UpSync"])
        #expect(states[0]["status"] == "NEW")
        #expect(states[0]["totalSize"] == -1)
        #expect(states[0]["maxTimeStamp"] == -1)

        let runs = try Self.pipeline(["runs", demo.store])
        #expect(runs.stdout.contains("succeeded"))
        #expect(runs.stdout.contains(reportDir))
    }

    @Test func jsonLogFormatWritesOneObjectPerLine() throws {
        let demo = try Self.demoCopy()
        defer { try? FileManager.default.removeItem(atPath: (demo.store as NSString).deletingLastPathComponent) }
        let result = try Self.pipeline(["run", demo.pipeline, "--log-format", "json", "--quiet"])
        #expect(result.exitCode == 0)
        #expect(result.stdout.split(separator: "\n").count == 1)
        // Quiet: warnings and errors only, and the run's final event for the log collector.
        let quietLines = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("warning:") }
        #expect(quietLines.count == 1, "\(quietLines)")
        let last = quietLines.last.flatMap { try? JSONParser.parse(String($0)) }
        #expect(last?["event"] == "runFinished" && last?["exitCode"] == 0)
        let verbose = try Self.pipeline(["run", demo.pipeline, "--log-format", "json"])
        let events = verbose.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.map { try! JSONParser.parse(String($0)) }
        #expect(events.first?["event"] == "runStarted")
        #expect(events.last?["event"] == "runFinished")
        #expect(events.last?["exitCode"] == 0)
        #expect(events.allSatisfy { ($0["ts"]?.stringValue ?? "").hasSuffix("Z") })
    }

    @Test func aLockedStoreExitsFour() throws {
        let demo = try Self.demoCopy()
        defer { try? FileManager.default.removeItem(atPath: (demo.store as NSString).deletingLastPathComponent) }
        let lock = try StoreLock(storePath: demo.store)
        let result = try Self.pipeline(["run", demo.pipeline])
        #expect(result.exitCode == 4)
        #expect(result.stderr.contains("another run holds this store"))
        lock.release()
        #expect(try Self.pipeline(["run", demo.pipeline]).exitCode == 0)
    }

    @Test func aKilledRunLeavesNoStaleLock() throws {
        let demo = try Self.demoCopy()
        defer { try? FileManager.default.removeItem(atPath: (demo.store as NSString).deletingLastPathComponent) }
        // Another process holding the lock (flock(2), as a run does), then killed.
        let holder = try ChildProcess("/usr/bin/perl", ["-MFcntl=:flock", "-e", "open(F, '>', $ARGV[0]) or die; flock(F, LOCK_EX) or die; sleep 30", demo.store + ".lock"])
        var waited = 0
        while (try? StoreLock(storePath: demo.store)).map({ $0.release(); return true }) == true && waited < 100 {
            Thread.sleep(forTimeInterval: 0.02)
            waited += 1
        }
        #expect(try Self.pipeline(["run", demo.pipeline]).exitCode == 4)
        holder.kill()
        holder.wait()
        #expect(try Self.pipeline(["run", demo.pipeline]).exitCode == 0)
    }

    @Test func variableFileSuppliesVariables() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "# comment\nREPORT_NAME=from-file\n".write(toFile: directory + "/vars.env", atomically: true, encoding: .utf8)
        try #"{ "name": "${REPORT_NAME}", "store": "s.sqlite", "stages": [] }"#.write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
        let result = try Self.pipeline(["validate", directory + "/p.json", "--var-file", directory + "/vars.env"])
        #expect(result.exitCode == 0)
        let overridden = try Self.pipeline(["run", directory + "/p.json", "--var-file", directory + "/vars.env", "--var", "REPORT_NAME=cli"])
        #expect(overridden.exitCode == 0)
        #expect(overridden.stdout.split(separator: "\n").last?.contains("/reports/cli/") == true)
    }

    @Test func missingStoreIsAClearError() throws {
        let result = try Self.pipeline(["soups", "/nonexistent/store.sqlite"])
        #expect(result.exitCode == 2)
        #expect(result.stderr == "error: /nonexistent/store.sqlite: no store here (run a pipeline first)\n")
    }
}

/// `pipeline emulator` as a process: its start line, and a clear error for a bad seed.
@Suite struct EmulatorCommandTests {
    @Test func printsItsStartLineAndServes() async throws {
        let process = try ChildProcess(PipelineCLITests.packageRoot + "/.build/debug/pipeline",
                                       ["emulator", "--port", "0", "--seed", PipelineCLITests.packageRoot + "/samples/org/seed.json",
                                        "--access-token", "test-token-123"], stdout: .pipe)
        defer { process.kill(); process.wait() }
        let text = process.readLine() ?? ""
        let match = try #require(text.firstMatch(of: /^instance_url=(http:\/\/127\.0\.0\.1:\d+) access_token=test-token-123 username=demo@syncpipeline\.dev$/))
        var request = URLRequest(url: URL(string: String(match.1) + "/services/data/v62.0/limits")!)
        request.setValue("Bearer test-token-123", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try JSONParser.parse(data).value["DailyApiRequests"]?["Max"] == 15000)
    }

    @Test func aMalformedSeedExitsTwoWithItsPlace() throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #"{"objects": [{"name": "Thing__c", "keyPrefix": "a0", "fields": []}]}"#.write(toFile: directory + "/seed.json", atomically: true, encoding: .utf8)
        let result = try PipelineCLITests.pipeline(["emulator", "--port", "0", "--seed", directory + "/seed.json"])
        #expect(result.exitCode == 2)
        #expect(result.stderr == "error: \(directory)/seed.json: objects[0].keyPrefix: is required: 3 letters or digits, e.g. \"001\"\n")
        #expect(result.stdout.isEmpty)
    }
}

/// The shipped demo pipeline end to end: embedded emulator, extraction, report.
@Suite struct DemoPipelineTests {
    @Test func theDemoRunsOnTheEmbeddedEmulator() throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var demo = try String(contentsOfFile: PipelineCLITests.packageRoot + "/pipelines/demo.json", encoding: .utf8)
        demo = demo.replacingOccurrences(of: "\"../samples/", with: "\"\(PipelineCLITests.packageRoot)/samples/")
            .replacingOccurrences(of: "\"../.pipeline/demo.sqlite\"", with: "\"\(directory)/demo.sqlite\"")
        try demo.write(toFile: directory + "/demo.json", atomically: true, encoding: .utf8)
        let result = try PipelineCLITests.pipeline(["run", directory + "/demo.json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let reportDir = try #require(result.stdout.split(separator: "\n").last.map(String.init))
        let report = try JSONParser.parse(String(contentsOfFile: reportDir + "/report.json", encoding: .utf8))
        func counts(_ id: String) -> JSONValue? {
            report["stages"]?.arrayValue?.first { $0["id"] == .string(id) }?["counts"]
        }
        #expect(counts("org-accounts") == ["read": 3])
        #expect(counts("stage-org-accounts")?["created"] == 6)
        #expect(counts("stage-contacts")?["created"] == 3)
        #expect(counts("mark-accounts")?["created"] == 3)
        #expect((report["api"]?["requests"]?.integerValue ?? 0) >= 2)
        #expect(FileManager.default.fileExists(atPath: directory + "/demo.sqlite.org.sqlite"))
        #expect(counts("up")?["created"] == 6, "3 new accounts and their 3 contacts")
        #expect(counts("up")?["failed"] == 0)
        #expect(counts("down")?["updated"] == 3, "Acme and its two contacts now carry the sync's id")
        #expect(counts("ghosts") == ["ghostsRemoved": 0])
        let dirty = try PipelineCLITests.pipeline(["soups", directory + "/demo.sqlite", "AccountSoup", "--dirty"])
        #expect(dirty.stdout.isEmpty, "everything marked dirty was synced up")
        let contacts = try PipelineCLITests.pipeline(["soups", directory + "/demo.sqlite", "ContactSoup", "--json"])
        let entries = contacts.stdout.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        #expect(entries.count == 6)
        #expect(entries.allSatisfy { !($0["Id"]?.stringValue ?? "local_").hasPrefix("local_") && !($0["AccountId"]?.stringValue ?? "local_").hasPrefix("local_") },
                "every contact has its server id and its account's")
        #expect(FileManager.default.fileExists(atPath: reportDir + "/Contact-success.csv"))
    }
}
