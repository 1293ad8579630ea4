import Foundation
import JSON
import Testing

/// SOSL (`/search`) over the stored records, and the minimal Tooling API (`/tooling`).
@Suite struct SearchAndToolingTests {
    static func get(_ emu: EmulatorHarness, _ path: String, _ parameter: String, _ text: String) async throws -> Reply {
        try await emu.rest("GET", "\(path)?\(parameter)=" + (text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text))
    }

    static func names(_ reply: Reply, _ field: String = "Name") -> [String] {
        (reply.json["searchRecords"]?.arrayValue ?? []).compactMap { $0[field]?.stringValue }
    }

    @Test func findReturnsTheMatchingRecordsOfEachObject() async throws {
        try await withEmulator { emu in
            let acme = try await Self.get(emu, "/search", "q", "FIND {Acme} RETURNING Account(Id, Name)")
            #expect(acme.status == 200, "\(acme.text)")
            let record = try #require(acme.json["searchRecords"]?[0])
            #expect(record["attributes"]?["type"] == "Account" && record["Name"] == "Acme Corporation")
            #expect(record["Id"]?.stringValue?.hasPrefix("001") == true)

            // Whole words, case-insensitively; a trailing * is a wildcard; OR joins alternatives.
            #expect(Self.names(try await Self.get(emu, "/search", "q", "FIND {acm} RETURNING Account(Name)")).isEmpty)
            #expect(Self.names(try await Self.get(emu, "/search", "q", "FIND {acm*} RETURNING Account(Name)")) == ["Acme Corporation"])
            let either = try await Self.get(emu, "/search", "q", "FIND {Coyote OR Runner} RETURNING Contact(LastName ORDER BY LastName)")
            #expect(Self.names(either, "LastName") == ["Coyote", "Runner"], "\(either.text)")
            // A phrase, in Contact's compound Name; both words needed without OR.
            #expect(Self.names(try await Self.get(emu, "/search", "q", "FIND {\"road runner\"} RETURNING Contact(Name)")) == ["Road Runner"])
            #expect(Self.names(try await Self.get(emu, "/search", "q", "FIND {road coyote} RETURNING Contact(Name)")).isEmpty)
            // The scope: an e-mail address matches in ALL FIELDS, not in NAME FIELDS.
            let all = try await Self.get(emu, "/search", "q", "FIND {acme} IN ALL FIELDS RETURNING Contact(LastName)")
            #expect(Self.names(all, "LastName").sorted() == ["Coyote", "Runner"], "\(all.text)")
            #expect(Self.names(try await Self.get(emu, "/search", "q", "FIND {acme} IN NAME FIELDS RETURNING Contact(LastName)"), "LastName").isEmpty)
            // WHERE and LIMIT inside RETURNING, and a LIMIT on the whole search.
            let filtered = try await Self.get(emu, "/search", "q", "FIND {Acme OR Globex} RETURNING Account(Name WHERE Industry = 'Energy')")
            #expect(Self.names(filtered) == ["Globex"], "\(filtered.text)")
            let limited = try await Self.get(emu, "/search", "q", "FIND {Acme OR Globex} RETURNING Account(Name ORDER BY Name) LIMIT 1")
            #expect(Self.names(limited) == ["Acme Corporation"])
            // Without RETURNING: every searchable object, ids only.
            let everywhere = try await Self.get(emu, "/search", "q", "FIND {Globex}")
            let types = (everywhere.json["searchRecords"]?.arrayValue ?? []).compactMap { $0["attributes"]?["type"]?.stringValue }
            #expect(types.contains("Account") && !types.contains("EntityDefinition"), "\(everywhere.text)")
        }
    }

    @Test func malformedSearchesAreRefusedAsAnOrgRefusesThem() async throws {
        try await withEmulator { emu in
            expectError(try await Self.get(emu, "/search", "q", "FIND Acme"), 400, "MALFORMED_SEARCH")
            expectError(try await Self.get(emu, "/search", "q", "FIND {a} RETURNING Account"), 400, "MALFORMED_SEARCH")
            expectError(try await Self.get(emu, "/search", "q", "FIND {Acme} IN BODY FIELDS"), 400, "MALFORMED_SEARCH")
            expectError(try await Self.get(emu, "/search", "q", "FIND {Acme} RETURNING Nope__c(Id)"), 400, "INVALID_TYPE")
            expectError(try await Self.get(emu, "/search", "q", "FIND {Acme} RETURNING Account(Nope__c)"), 400, "MALFORMED_SEARCH")
        }
    }

    @Test func toolingQueriesItsOwnObjects() async throws {
        try await withEmulator { emu in
            let entity = try await Self.get(emu, "/tooling/query", "q",
                                            "SELECT QualifiedApiName, KeyPrefix, Label FROM EntityDefinition WHERE QualifiedApiName = 'Account'")
            #expect(entity.status == 200, "\(entity.text)")
            #expect(entity.json["records"]?[0]?["KeyPrefix"] == "001" && entity.json["records"]?[0]?["Label"] == "Account")
            let custom = try await Self.get(emu, "/tooling/query", "q", "SELECT DeveloperName FROM EntityDefinition WHERE QualifiedApiName = 'Order__c'")
            #expect(custom.json["records"]?[0]?["DeveloperName"] == "Order")
            let classes = try await Self.get(emu, "/tooling/query", "q", "SELECT Id, Name FROM ApexClass")
            #expect(classes.json["totalSize"] == 0 && classes.json["done"] == true)
            expectError(try await Self.get(emu, "/tooling/query", "q", "SELECT Id FROM Account"), 400, "INVALID_TYPE")
            let list = try await emu.rest("GET", "/tooling/sobjects").json["sobjects"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
            #expect(list == ["EntityDefinition", "ApexClass", "InstalledSubscriberPackage"])
            #expect(try await emu.rest("GET", "/tooling/sobjects/ApexClass/describe").status == 200)
            let global = try await emu.rest("GET", "/sobjects").json["sobjects"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(!global.contains("EntityDefinition") && global.contains("RecordType"))
            expectError(try await emu.rest("POST", "/sobjects/ApexClass", json: ["Name": "X"]), 400, "INVALID_TYPE")
        }
    }
}
