import Foundation
import Testing

/// What the product leaves on disk holds customer data: owner-only whatever the umask, the dry
/// run's copy beside the store and gone afterwards, and an unusable store path is bad input
/// (exit 2), not "busy" (exit 4).
@Suite struct PrivacyTests {
    /// Every file and folder under `root` whose mode lets the group or others in.
    static func readableByOthers(under root: String) -> [String] {
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            let path = root + "/" + relative
            let mode = ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int) ?? 0
            if mode & 0o077 != 0 { found.append("\(relative) \(String(mode, radix: 8))") }
        }
        return found
    }

    @Test func everythingARunWritesIsTheOwnersOnly() throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = PipelineCLITests.packageRoot
        try "Name\nAcme\nGlobex\n".write(toFile: directory + "/accounts.csv", atomically: true, encoding: .utf8)
        try """
            { "name": "private", "store": "data/store.sqlite",
              "org": { "emulator": { "seed": "\(root)/samples/org/seed.json" } },
              "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Name", "type": "string" } ] } ],
              "stages": [ { "id": "extract", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                          { "id": "load", "type": "stage", "from": "extract", "soup": "Accounts", "matchOn": "Name" },
                          { "id": "org", "type": "extract.soql", "query": "SELECT Id, Name FROM Account" },
                          { "id": "report", "type": "report", "after": ["load", "org"], "formats": ["json", "md", "html", "csv"] } ] }
            """.write(toFile: directory + "/pipeline.json", atomically: true, encoding: .utf8)
        // The test process's umask (usually 022) is what the binary inherits.
        let run = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json"])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let dry = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json", "--dry-run"])
        #expect(dry.exitCode == 0, "\(dry.stderr)")
        let data = directory + "/data"
        #expect(FileManager.default.fileExists(atPath: data + "/store.sqlite"))
        #expect(FileManager.default.fileExists(atPath: data + "/store.sqlite.org.sqlite"), "the embedded org's database too")
        #expect(Self.readableByOthers(under: data).isEmpty, "\(Self.readableByOthers(under: data))")
        let dataMode = (try FileManager.default.attributesOfItem(atPath: data)[.posixPermissions] as? Int) ?? 0
        #expect(dataMode & 0o077 == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data).allSatisfy { !$0.contains("dry-run") }, "the dry run's copy is gone")
    }

    @Test func aDryRunCopyLeftByAKilledRunIsSweptByTheNext() throws {
        let (pipeline, store) = try PipelineCLITests.demoCopy()
        defer { try? FileManager.default.removeItem(atPath: (store as NSString).deletingLastPathComponent) }
        #expect(try PipelineCLITests.pipeline(["run", pipeline]).exitCode == 0)
        let leftover = store + ".dry-run-20260101T000000Z-abcdef.sqlite"
        for suffix in ["", "-wal", "-datasets"] {
            #expect(FileManager.default.createFile(atPath: leftover + suffix, contents: Data("customer data".utf8)))
        }
        let run = try PipelineCLITests.pipeline(["run", pipeline, "--dry-run"])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let folder = (store as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("dry-run") }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: NSTemporaryDirectory() + "pipeline-dry-run-"), "nothing in the shared temp folder")
    }

    @Test func anUnusableStorePathIsBadInputNotABusyStore() throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #"{ "name": "x", "store": "/proc/nope/store.sqlite", "stages": [ { "id": "report", "type": "report" } ] }"#
            .write(toFile: directory + "/pipeline.json", atomically: true, encoding: .utf8)
        let run = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json"])
        #expect(run.exitCode == 2, "exit 4 means busy, retry later; this will never work: \(run.stderr)")
        #expect(run.stderr.contains("/proc/nope"), "\(run.stderr)")
        #expect(!run.stderr.contains("NSCocoaErrorDomain") && !run.stderr.contains("another run holds"), "\(run.stderr)")
    }
}
