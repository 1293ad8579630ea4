import Foundation
import JSON
import Soups
import Stages
import Testing

/// `transform`: every step, their order, rejection with reasons and source lines, masking, and
/// the settings `pipeline validate` refuses.
@Suite struct TransformStageTests {
    struct Run {
        var outcome: RunOutcome
        var records: [JSONObject]
        var rejects: String?
        var counts: [String: Int] { outcome.report.stages.first { $0.id == "shape" }?.counts ?? [:] }
    }

    /// Runs `extract.csv` of `csv` into a `transform` with `settings` (a JSON object's members).
    func run(csv: String, settings: String, in directory: String, variables: [String: String] = [:], dryRun: Bool = false) async throws -> Run {
        try Data(csv.utf8).write(to: URL(fileURLWithPath: directory + "/legacy.csv"))
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "legacy", "type": "extract.csv", "file": "legacy.csv" },
                          { "id": "shape", "type": "transform", "from": "legacy", \(settings) } ] }
            """, in: directory, variables: variables)
        let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(dryRun: dryRun), observer: RecordingObserver()).run()
        var records: [JSONObject] = []
        if !dryRun {
            records = try await SoupStore.openForReading(path: pipeline.store).datasets.records("shape", limit: 1000).compactMap(\.record.objectValue)
        }
        let rejects = try? String(contentsOfFile: outcome.report.reportDir + "/rejects/shape.csv", encoding: .utf8)
        return Run(outcome: outcome, records: records, rejects: rejects)
    }

    static let legacy = """
        Id,Surname,Mail,Status,Country,BirthText,Phone,Notes,First,Amount
        1,Silva, Ada.Silva@Example.COM ,A,Deutschland,1990-04-01,+1 555 0100,n1,Ada,100
        2,Okafor,uma@example.com,I,France,1985-12-31,+1 555 0101,n2,Uma,250.5
        3,,nobody@example.com,A,France,1970-01-01,+1 555 0102,n3,No,1
        4,Olsen,tariq@example.com,X,Spain,1991-01-01,+1 555 0103,n4,Tariq,2
        5,Mbeki,noah@example.com,A,Kenya,31/12/1990,+1 555 0104,n5,Noah,3
        6,Long,long@example.com,A,Spain,2000-02-02,+1 555 0105 0106 0107 0108 0109 0110 0111 0112,n6,Lee,4

        """

    @Test func everyStepInTheSPECsOrder() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try write("legacy,iso2\nDeutschland,DE\nFrance,FR\n", to: "countries.csv", in: directory)
        let run = try await run(csv: Self.legacy, settings: """
            "sobjectType": "Contact",
            "rename": { "Surname": "LastName", "Mail": "Email" },
            "map": { "Status": { "values": { "A": "Active", "I": "Inactive" }, "otherwise": "reject" },
                     "Country": { "file": "countries.csv", "key": "legacy", "value": "iso2", "otherwise": "keep" },
                     "Notes": { "values": { "n([0-9])": "note $1" }, "regex": true } },
            "set": { "Email": "LOWER(TRIM(Email))", "LeadSource": "\\"Legacy CRM\\"", "Birthdate": "DATEVALUE(BirthText)",
                     "Label": "LastName & ' (' & Status & ')'", "Doubled": "Amount * 2", "Label2": "UPPER(Label)" },
            "where": "NOT(ISBLANK(LastName))",
            "reject": [ { "when": "LEN(Phone) > 40", "reason": "phone longer than 40" } ],
            "drop": ["BirthText", "First"]
            """, in: directory)
        #expect(run.outcome.exitCode == 3, "rejected records make the run partial")
        #expect(run.counts == ["read": 6, "filtered": 1, "rejected": 3])
        #expect(run.records.count == 2)
        let ada = try #require(run.records.first)
        #expect(ada["attributes"] == ["type": "Contact", "line": 2])
        #expect(ada["LastName"] == "Silva" && ada["Surname"] == nil)
        #expect(ada["Email"] == "ada.silva@example.com")
        #expect(ada["Status"] == "Active" && ada["Country"] == "DE" && ada["Notes"] == "note 1")
        #expect(ada["LeadSource"] == "Legacy CRM" && ada["Birthdate"] == "1990-04-01")
        #expect(ada["Label"] == "Silva (Active)" && ada["Label2"] == "SILVA (ACTIVE)" && ada["Doubled"] == 200)
        #expect(ada["BirthText"] == nil && ada["First"] == nil && ada["Id"] == "1")
        #expect(run.records[1]["Country"] == "FR" && run.records[1]["Doubled"] == 501)
        let lines = try #require(run.rejects).components(separatedBy: "\r\n")
        #expect(lines[0] == "line,reason,raw")
        #expect(lines[1].hasPrefix(#"5,"map.Status: ""X"" is not in the map","#))
        #expect(lines[2].hasPrefix(#"6,"set.Birthdate: DATEVALUE: ""31/12/1990"" is not a date (YYYY-MM-DD)","#))
        #expect(lines[3].hasPrefix("7,phone longer than 40,"))
        #expect(lines[3].contains(#"""Surname"":""Long"""#), "the raw record is the one read, before the transform")
    }

    /// Without `rename` a record is changed in place, and a rejected one is put back from what its
    /// maps and formulas replaced or appended: the raw column is the record as read, member for
    /// member, whichever step refused it.
    @Test func aRecordChangedInPlaceIsRejectedAsRead() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try await run(csv: "Id,Name,Status,Amount\n1,Ann,A,10\n2,Bob,X,20\n3,Cy,A,abc\n4,Di,A,5000\n5,Ed,,7\n", settings: """
            "map": { "Status": { "values": { "A": "Active", "": "Active" }, "otherwise": "reject" } },
            "set": { "Name": "UPPER(Name)", "Status": "Status & '!'", "Label": "Name & '-' & Status", "Doubled": "VALUE(Amount) * 2" },
            "reject": [ { "when": "Doubled > 5000", "reason": "too big" } ]
            """, in: directory)
        #expect(run.counts == ["read": 5, "filtered": 0, "rejected": 3])
        #expect(run.records.map { $0["Label"] } == ["ANN-Active!", "ED-Active!"])
        let lines = try #require(run.rejects).components(separatedBy: "\r\n")
        #expect(lines[1] == #"3,"map.Status: ""X"" is not in the map","{""Id"":""2"",""Name"":""Bob"",""Status"":""X"",""Amount"":""20""}""#)
        #expect(lines[2] == #"4,"set.Doubled: VALUE: ""abc"" is not a number","{""Id"":""3"",""Name"":""Cy"",""Status"":""A"",""Amount"":""abc""}""#)
        #expect(lines[3] == #"5,too big,"{""Id"":""4"",""Name"":""Di"",""Status"":""A"",""Amount"":""5000""}""#)
    }

    /// Every kind of step on the shipped bulk-load contacts (4,950 rows): the counts add up and
    /// each step shows in every record that passed.
    @Test func everyKindOfStepOnTheShippedSamples() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("samples/bulk").path
        _ = try write("title,full\nCEO,Chief Executive Officer\nCFO,Chief Financial Officer\nCTO,Chief Technology Officer\n", to: "titles.csv", in: directory)
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "contacts", "type": "extract.csv", "file": "\(samples)/contacts.csv" },
                          { "id": "shape", "type": "transform", "from": "contacts", "sobjectType": "Contact",
                            "rename": { "Title": "JobTitle", "AccountExternalId": "AccountKey" },
                            "map": { "JobTitle": { "file": "titles.csv", "key": "title", "value": "full" },
                                     "AccountKey": { "values": { "ACC-0*([0-9]+)": "A$1" }, "regex": true } },
                            "set": { "Department": "IF(ISBLANK(JobTitle), 'Unknown', IF(BEGINS(JobTitle, 'Chief'), 'Executive', 'Staff'))",
                                     "Email": "LOWER(TRIM(Email))", "Initials": "LEFT(FirstName, 1) & LEFT(LastName, 1)",
                                     "Domain": "MID(Email, FIND('@', Email) + 1, 80)" },
                            "where": "NOT(ISBLANK(LastName))",
                            "reject": [ { "when": "NOT(CONTAINS(Domain, '.'))", "reason": "an e-mail without a domain" } ],
                            "mask": { "FirstName": "firstName", "LastName": "lastName", "Email": "email", "Phone": "phone" },
                            "maskSeed": "${SEED}",
                            "drop": ["LegacyId"] } ] }
            """, in: directory, variables: ["SEED": "samples-seed"])
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        let counts = try #require(outcome.report.stages.first { $0.id == "shape" }?.counts)
        #expect(counts == ["read": 4_950, "filtered": 1, "rejected": 1], "no LastName on one row, m.garcia@ on another")
        let records = try await SoupStore.openForReading(path: pipeline.store).datasets.records("shape", limit: 10_000).compactMap(\.record.objectValue)
        #expect(records.count == 4_948)
        let rejects = try String(contentsOfFile: outcome.report.reportDir + "/rejects/shape.csv", encoding: .utf8)
        #expect(rejects.contains("\r\n482,an e-mail without a domain,"), "contacts.csv line 482: \(rejects)")
        for record in records {
            #expect(record["attributes"]?["type"] == "Contact" && record["LegacyId"] == nil && record["Title"] == nil)
            #expect(record["AccountKey"]?.stringValue?.hasPrefix("A") == true && record["AccountKey"]?.stringValue?.contains("ACC") == false)
            #expect(record["Email"]?.stringValue?.contains("@example.") == true && record["Domain"]?.stringValue?.hasSuffix(".example.com") == true)
            #expect(["Executive", "Staff", "Unknown"].contains(record["Department"]?.stringValue ?? ""))
            #expect(!["CEO", "CFO", "CTO"].contains(record["JobTitle"]?.stringValue ?? ""))
        }
        let first = try #require(records.first)
        #expect(first["FirstName"] != "Noah" && first["Initials"] == "NM", "masked after the formulas read the names")
    }

    @Test func stepsSeeWhatEarlierStepsDid() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // map sees the renamed field; set sees the mapped value and earlier sets; where and reject
        // see the set values and the unmasked ones; mask runs before drop; keep keeps attributes.
        let run = try await run(csv: "Code,Name,Secret\nA,Ann,s1\nB,Bob,s2\nA,Cy,s3\n", settings: """
            "rename": { "Code": "Status" },
            "map": { "Status": { "values": { "A": "Active", "B": "Blocked" } } },
            "set": { "Tag": "Status & '-' & Name", "Tag2": "Tag & '!'", "Upper": "UPPER(Tag2)" },
            "where": "Status <> 'Blocked'",
            "reject": [ { "when": "Name = 'Cy'", "reason": "Cy is out" }, { "when": "TRUE", "reason": "never reached for Cy" } ],
            "mask": { "Name": "firstName" },
            "keep": ["Name", "Tag", "Upper", "Status"]
            """, in: directory)
        #expect(run.counts == ["read": 3, "filtered": 1, "rejected": 2])
        #expect(run.rejects?.contains("4,Cy is out,") == true)
        #expect(run.rejects?.contains("2,never reached for Cy,") == true)
        #expect(run.records.isEmpty)

        let kept = try await self.run(csv: "Code,Name,Secret\nA,Ann,s1\n", settings: """
            "rename": { "Code": "Status" }, "map": { "Status": { "values": { "A": "Active" } } },
            "set": { "Tag": "Status & '-' & Name", "Upper": "UPPER(Tag)" },
            "mask": { "Name": "firstName" }, "keep": ["Name", "Tag", "Upper"]
            """, in: directory)
        let record = try #require(kept.records.first)
        #expect(record.keys == ["attributes", "Name", "Tag", "Upper"])
        #expect(record["Tag"] == "Active-Ann" && record["Upper"] == "ACTIVE-ANN")
        #expect(record["Name"] != "Ann" && record["Name"]?.stringValue?.isEmpty == false, "masked after set read it")
    }

    @Test func blankResultsLeaveAbsentFieldsAbsentAndMapOtherwiseFormula() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try await run(csv: "Name,Email,Kind\nAnn,,zz\nBob,B@X.COM,a\n", settings: """
            "set": { "Email": "LOWER(Email)", "Cleared": "NULL" },
            "map": { "Kind": { "values": { "a": "Alpha" }, "otherwise": "UPPER(Kind) & '?'" } }
            """, in: directory)
        #expect(run.records.count == 2)
        #expect(run.records[0]["Email"] == nil, "an absent field stays absent when the formula gives blank (the soup keeps its value)")
        #expect(run.records[0]["Kind"] == "ZZ?" && run.records[1]["Kind"] == "Alpha")
        #expect(run.records[1]["Email"] == "b@x.com")
        #expect(run.records[1]["Cleared"] == nil)
    }

    @Test func maskingIsDeterministicPerSeedAndTheSeedIsNeverWritten() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let csv = "Name,Email,Phone,Street,City,Zip,Company,Note,Born,Ssn,Key\nAda Silva,ada@corp.com,+1 (555) 010-0199,1 Main St,Paris,SW1A 1AA,Acme,Hello there,1990-04-01,123-45-6789,K1\n"
        let settings = """
            "mask": { "Name": "fullName", "Email": "email", "Phone": "phone", "Street": "street", "City": "city", "Zip": "postalCode",
                      "Company": "company", "Note": "text", "Born": "date", "Ssn": "digits", "Key": "hash" },
            "maskSeed": "${MASK_SEED}"
            """
        let seed = "s3cret-mask-seed-42"
        let first = try await run(csv: csv, settings: settings, in: directory, variables: ["MASK_SEED": seed])
        let second = try await run(csv: csv, settings: settings, in: directory, variables: ["MASK_SEED": seed])
        let other = try await run(csv: csv, settings: settings, in: directory, variables: ["MASK_SEED": "another-seed"])
        let masked = try #require(first.records.first)
        #expect(masked == second.records.first, "the same seed masks the same way in every run")
        let different = try #require(other.records.first)
        for field in ["Name", "Email", "Phone", "Street", "Zip", "Note", "Born", "Ssn", "Key"] {
            #expect(masked[field] != different[field], "another seed, another \(field)")
        }
        #expect(masked["Email"]?.stringValue?.hasSuffix(".com") == true || masked["Email"]?.stringValue?.hasSuffix(".org") == true
                || masked["Email"]?.stringValue?.hasSuffix(".net") == true)
        #expect(masked["Email"]?.stringValue?.contains("@example.") == true)
        let phone = try #require(masked["Phone"]?.stringValue)
        #expect(phone.hasPrefix("+1 (") && phone.count == "+1 (555) 010-0199".count && phone != "+1 (555) 010-0199")
        #expect(phone.map { $0.isNumber } == "+1 (555) 010-0199".map { $0.isNumber }, "the same layout: \(phone)")
        let zip = try #require(masked["Zip"]?.stringValue)
        #expect(zip.map { $0.isLetter } == "SW1A 1AA".map { $0.isLetter } && zip.map { $0.isNumber } == "SW1A 1AA".map { $0.isNumber })
        #expect(masked["Note"]?.stringValue?.count == "Hello there".count)
        #expect(masked["Ssn"]?.stringValue?.count == 11 && masked["Ssn"]?.stringValue?.filter { $0 == "-" }.count == 2)
        #expect(masked["Key"]?.stringValue?.count == 64)
        let born = try #require(masked["Born"]?.stringValue)
        #expect(born.count == 10 && born != "1990-04-01" && (born.hasPrefix("1989") || born.hasPrefix("1990") || born.hasPrefix("1991")))
        #expect(masked["City"]?.stringValue?.isEmpty == false && masked["Company"]?.stringValue?.contains(" ") == true)

        // The same value masks the same way in another object (another stage, another field name).
        try Data("LastName,Mail\nx,ada@corp.com\n".utf8).write(to: URL(fileURLWithPath: directory + "/leads.csv"))
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "leads", "type": "extract.csv", "file": "leads.csv", "sobjectType": "Lead" },
                          { "id": "shape", "type": "transform", "from": "leads", "mask": { "Mail": "email" }, "maskSeed": "${MASK_SEED}" } ] }
            """, in: directory, variables: ["MASK_SEED": seed])
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        let lead = try await SoupStore.openForReading(path: pipeline.store).datasets.records("shape", limit: 10).first?.record
        #expect(lead?["Mail"] == masked["Email"])

        // The seed is in no file the runs wrote: reports, logs, rejects, the store.
        for folder in [first.outcome.report.reportDir, outcome.report.reportDir, directory] {
            let files = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
            for file in files where file != "pipeline.json" {
                guard let data = FileManager.default.contents(atPath: folder + "/" + file) else { continue }
                #expect(data.range(of: Data(seed.utf8)) == nil, "\(file) holds the seed")
            }
        }
    }

    @Test func aDryRunRunsTransforms() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try await run(csv: "Name\nAnn\n\nBob\nbad\n", settings: """
            "where": "Name <> 'Bob'", "reject": [ { "when": "Name = 'bad'", "reason": "bad name" } ]
            """, in: directory, dryRun: true)
        #expect(run.counts == ["read": 3, "filtered": 1, "rejected": 1])
        #expect(run.rejects?.contains("5,bad name,") == true)
    }

    @Test func badSettingsAreRefusedAtValidateWithPathAndColumn() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try write("Name\nx\n", to: "legacy.csv", in: directory)
        _ = try write("legacy,iso2\nA,B\nA,C\n", to: "dupes.csv", in: directory)
        let errors = loadErrors("""
            { "stages": [ { "id": "legacy", "type": "extract.csv", "file": "legacy.csv" },
                          { "id": "shape", "type": "transform", "from": "legacy",
                            "set": { "Email": "LOWR(TRIM(Email))", "Size": "LEN(1, 2)", "Bad": 3, "Len": "LEN(Name)", "Up": "UPPER(Len)" },
                            "where": "LEN(Name)", "reject": [ { "when": "TODAY() > ", "reason": "r" }, { "when": "TRUE" } ],
                            "map": { "A": { "values": { "x": "y" }, "otherwise": "UPPER(" }, "B": { "file": "missing.csv", "key": "k", "value": "v" },
                                     "C": { "file": "dupes.csv", "key": "legacy", "value": "nope" }, "D": { "file": "dupes.csv", "key": "legacy", "value": "iso2" },
                                     "E": { "values": { "(": "x" }, "regex": true }, "F": "A" },
                            "mask": { "Name": "shoeSize" }, "maskSeed": "literal-seed", "drop": ["x"], "keep": ["y"],
                            "lookups": [ { "field": "OwnerId", "sobjectType": "User", "match": { "Email": "LOWR(Owner)" }, "where": "IsActive =", "size": 1 } ] } ] }
            """, in: directory)
        let expected = [
            "stages[1].set.Email: column 1: unknown function LOWR",
            "stages[1].set.Size: column 1: LEN takes 1 argument, not 2",
            "stages[1].set.Bad: must be a formula string",
            "stages[1].set.Up: column 7: UPPER expects text for argument 1, not number",
            "stages[1].where: must be a condition (true or false), not a number formula",
            "stages[1].reject[0].when: column 11: the formula ends too soon",
            "stages[1].reject[1]: must be {\"when\": formula, \"reason\": text}",
            "stages[1].map.A.otherwise: column 7: the formula ends too soon",
            "stages[1].map.B.file: ",
            "stages[1].map.C: ",
            "stages[1].map.D.file: ",
            "stages[1].map.E: \"(\" is not a regular expression",
            "stages[1].map.F: must be an object",
            "stages[1].mask.Name: must be one of firstName",
            "stages[1].maskSeed: a mask seed is a secret",
            "stages[1].keep: give either drop",
            "stages[1].lookups[0].match.Email: column 1: unknown function LOWR",
            "stages[1].lookups[0].where: MALFORMED_QUERY at row 1",
            "stages[1].lookups[0].size: unknown key",
        ]
        for prefix in expected {
            #expect(errors.contains { $0.contains(prefix) }, "\(prefix) in \(errors)")
        }
        #expect(errors.contains { $0.contains("no column \"nope\"") })
        #expect(errors.contains { $0.contains("line 3: the key \"A\" repeats line 2") })
    }
}
