import Foundation
import GRDB
import JSON
import OrgEmulator
import OrgEmulatorTesting
import Testing

/// Seed files: located errors for malformed seeds, and a database that persists between starts
/// and is reseeded when the seed changes.
@Suite struct SeedTests {
    /// Writes `text` as a seed file in a fresh directory.
    static func writeSeed(_ text: String, in directory: URL, name: String = "seed.json") throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// The description of the StartError `OrgEmulator(configuration:)` throws for `seedPath`.
    static func startError(seedPath: String) -> String? {
        do {
            _ = try OrgEmulator(configuration: .init(port: 0, seedPath: seedPath))
            return nil
        } catch {
            return error.description
        }
    }

    @Test func syntaxErrorNamesFileLineAndColumn() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.writeSeed("{\n  \"objects\": [\n    { \"name\": \"Thing__c\", }\n  ]\n}\n", in: directory)
        let description = try #require(Self.startError(seedPath: path))
        #expect(description.hasPrefix(path + ": "), "\(description)")
        #expect(description.contains("line 3, column"), "\(description)")
    }

    @Test func unknownFieldTypeNamesTheJSONPath() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.writeSeed("""
            {"objects": [{"name": "Thing__c", "keyPrefix": "a05", "fields": [
              {"name": "Size__c", "type": "int"},
              {"name": "Blob__c", "type": "blob"}
            ]}]}
            """, in: directory)
        let description = try #require(Self.startError(seedPath: path))
        #expect(description.hasPrefix(path + ": objects[0].fields[1].type: "), "\(description)")
        #expect(description.contains("must be one of"), "\(description)")
    }

    @Test func duplicateKeyPrefixNamesTheJSONPath() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.writeSeed("""
            {"objects": [
              {"name": "First__c", "keyPrefix": "a05", "fields": []},
              {"name": "Second__c", "keyPrefix": "a05", "fields": []}
            ]}
            """, in: directory)
        let description = try #require(Self.startError(seedPath: path))
        #expect(description == "\(path): objects[1].keyPrefix: key prefix a05 is already used", "\(description)")

        // A built-in object's prefix (User is 005) is taken too.
        let clash = try Self.writeSeed(#"{"objects": [{"name": "Person__c", "keyPrefix": "005"}]}"#, in: directory, name: "clash.json")
        #expect(Self.startError(seedPath: clash) == "\(clash): objects[0].keyPrefix: key prefix 005 is already used")
    }

    @Test func referenceToAnUnknownKeyNamesTheJSONPath() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.writeSeed("""
            {"objects": [{"name": "Account", "keyPrefix": "001", "fields": [{"name": "Name", "type": "string", "required": true}]},
                         {"name": "Contact", "keyPrefix": "003", "fields": [{"name": "LastName", "type": "string"},
                           {"name": "AccountId", "type": "reference", "referenceTo": "Account"}]}],
             "records": [{"key": "a", "type": "Account", "fields": {"Name": "A"}},
                         {"type": "Contact", "fields": {"LastName": "L", "AccountId": {"$ref": "nope"}}}]}
            """, in: directory)
        let description = try #require(Self.startError(seedPath: path))
        #expect(description == "\(path): records[1].fields.AccountId: no earlier record with key \"nope\"", "\(description)")
    }

    @Test func missingSeedFileIsAStartError() throws {
        let path = "/nonexistent/\(UUID().uuidString)/seed.json"
        let description = try #require(Self.startError(seedPath: path))
        #expect(description.hasPrefix(path + ": "))
    }

    @Test func databasePersistsAcrossStartsAndIsReseededWhenTheSeedChanges() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("org.sqlite").path
        let seedText = try String(contentsOfFile: SampleOrg.seedPath, encoding: .utf8)
        let seed = try Self.writeSeed(seedText, in: directory)

        // First start: create a record, change a seed record, delete another.
        let (created, acme) = try await withEmulator(databasePath: database, seedPath: seed) { emu in
            let created = try await emu.create("Account", ["Name": "Persisted", "External_Id__c": "KEEP-1"])
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            #expect(try await emu.rest("PATCH", "/sobjects/Account/\(acme)", json: ["Industry": "Banking"]).status == 204)
            let order = try await emu.id("Order__c", "Order_Number__c", "ORD-0001")
            #expect(try await emu.rest("DELETE", "/sobjects/Order__c/\(order)").status == 204)
            return (created, acme)
        }

        // Second start, same seed: everything is still there, and new ids do not collide.
        try await withEmulator(databasePath: database, seedPath: seed) { emu in
            let record = try await emu.record("Account", created)
            #expect(record["Name"] == "Persisted")
            #expect(try await emu.record("Account", acme)["Industry"] == "Banking")
            #expect(try await emu.rest("GET", "/sobjects/Order__c/Order_Number__c/ORD-0001").status == 404)
            #expect(try await emu.count("Account") == 4)
            #expect(try await emu.count("Order_Line__c") == 0)
            let another = try await emu.create("Account", ["Name": "Second run"])
            #expect(another != created)
            #expect(try await emu.count("Account") == 5)
        }

        // Third start with a changed seed: the database is reloaded from it.
        let changed = seedText.replacingOccurrences(of: "\"name\": \"SyncPipeline Demo Org\"", with: "\"name\": \"Changed Org\"")
        try #require(changed != seedText)
        try Data(changed.utf8).write(to: URL(fileURLWithPath: seed))
        try await withEmulator(databasePath: database, seedPath: seed) { emu in
            expectError(try await emu.rest("GET", "/sobjects/Account/External_Id__c/KEEP-1"), 404, "NOT_FOUND")
            #expect(try await emu.record("Account", acme)["Industry"] == "Technology")
            #expect(try await emu.rest("GET", "/sobjects/Order__c/Order_Number__c/ORD-0001").status == 200)
            #expect(try await emu.counts() == AdminAndFaultsTests.seedCounts)
        }
    }

    /// Records are stored without their empty fields; a database an earlier version wrote holds
    /// them as `null`s and is answered alike.
    @Test func aDatabaseWithStoredNullsIsReadAsItIs() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("org.sqlite").path
        let seed = try Self.writeSeed(try String(contentsOfFile: SampleOrg.seedPath, encoding: .utf8), in: directory)
        let id = try await withEmulator(databasePath: database, seedPath: seed) { emu in
            try await emu.create("Contact", ["LastName": "Older", "FirstName": "Ann"])
        }
        // As an earlier version wrote it: every empty field a `null`.
        let queue = try DatabaseQueue(path: database)
        try await queue.write { db in
            let stored = try #require(try String.fetchOne(db, sql: "SELECT data FROM records WHERE id = ?", arguments: [id]))
            #expect(!stored.contains("\"Email\""))
            try db.execute(sql: "UPDATE records SET data = json_set(data, '$.Email', json('null'), '$.Title', json('null')) WHERE id = ?", arguments: [id])
        }
        try await queue.close()
        try await withEmulator(databasePath: database, seedPath: seed) { emu in
            let encoded = "SELECT firstname, email FROM Contact WHERE LastName = 'Older' AND Title = null".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let reply = try await emu.rest("GET", "/query?q=\(encoded)")
            let record = try #require(reply.json["records"]?.arrayValue?.first?.objectValue)
            #expect(record.keys == ["attributes", "FirstName", "Email"])
            #expect(record["FirstName"] == "Ann")
            #expect(record["Email"] == .null)
            #expect(try await emu.rest("PATCH", "/sobjects/Contact/\(id)", json: ["FirstName": "Anne"]).status == 204)
            let whole = try await emu.record("Contact", id)
            #expect(whole["FirstName"] == "Anne")
            #expect(whole["Email"] == .null)
        }
    }

    @Test func inMemoryEmulatorsDoNotShareRecords() async throws {
        let id = try await withEmulator { emu in try await emu.create("Account", ["Name": "Only here"]) }
        try await withEmulator { emu in
            expectError(try await emu.rest("GET", "/sobjects/Account/\(id)"), 404, "NOT_FOUND")
            #expect(try await emu.count("Account") == 3)
        }
    }
}
