import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import OrgEmulatorTesting
import Testing

/// What real clients other than simple-salesforce read first (issue 17): their default API
/// versions (CumulusCI 67.0, amaxa 52.0), `limits/recordCount`, the Organization record's fields,
/// and `Location` on an upsert that creates.
@Suite struct ClientCompatibilityTests {
    @Test(arguments: ["31.0", "52.0", "59.0", "67.0"])
    func everyVersionACurrentOrgServesIsServed(version: String) async throws {
        try await withEmulator { emu in
            let reply = try await emu.send("GET", "/services/data/v\(version)/query?q=SELECT+Id+FROM+Account")
            #expect(reply.status == 200, "v\(version): \(reply.text)")
            #expect(try await emu.send("GET", "/services/data/v\(version)/sobjects/Account/describe").status == 200)
        }
    }

    @Test func versionsOutsideTheRangeAreNotFound() async throws {
        try await withEmulator { emu in
            let tooOld = try await emu.send("GET", "/services/data/v30.0/query?q=SELECT+Id+FROM+Account")
            let tooNew = try await emu.send("GET", "/services/data/v99.0/query?q=SELECT+Id+FROM+Account")
            #expect(tooOld.status == 404 && tooNew.status == 404)
        }
    }

    @Test func recordCountAnswersPerObject() async throws {
        try await withEmulator { emu in
            let accounts = try await emu.count("Account")
            let contacts = try await emu.count("Contact")
            let reply = try await emu.rest("GET", "/limits/recordCount?sObjects=Account,contact")
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json == ["sObjects": [["count": .integer(Int64(accounts)), "name": "Account"],
                                                ["count": .integer(Int64(contacts)), "name": "Contact"]]])
            let all = try await emu.rest("GET", "/limits/recordCount")
            #expect(all.json["sObjects"]?.arrayValue?.contains(["count": .integer(Int64(accounts)), "name": "Account"]) == true)
            // An unknown name is ignored and an object without records left out, as orgs answer.
            #expect(try await emu.rest("GET", "/limits/recordCount?sObjects=Nope,Account").json == ["sObjects": [["count": .integer(Int64(accounts)), "name": "Account"]]])
            #expect(try await emu.rest("GET", "/limits/recordCount?sObjects=Task").json == ["sObjects": []])
            #expect(try await emu.rest("GET", "/limits").json["DailyApiRequests"] != nil, "/limits is still the limits")
        }
    }

    @Test func theOrganizationRecordHasWhatClientsRead() async throws {
        try await withEmulator { emu in
            let soql = "SELECT Id, Name, OrganizationType, IsSandbox, InstanceName, NamespacePrefix, TrialExpirationDate FROM Organization"
            let reply = try await emu.rest("GET", "/query?q=" + soql.replacingOccurrences(of: " ", with: "+"))
            #expect(reply.status == 200, "\(reply.text)")
            let organization = try #require(reply.json["records"]?[0])
            #expect(organization["InstanceName"] == "CS1")
            #expect(organization["NamespacePrefix"] == .null)
            #expect(organization["TrialExpirationDate"] == .null)
            #expect(organization["IsSandbox"] == true)
        }
    }

    @Test func anUpsertThatCreatesSaysWhere() async throws {
        try await withEmulator { emu in
            let created = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/NEW-1", json: ["Name": "New"])
            #expect(created.status == 201)
            let id = try #require(created.json["id"]?.stringValue)
            #expect(created.header("Location") == "/services/data/v62.0/sobjects/Account/\(id)")
            let updated = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/NEW-1", json: ["Name": "Newer"])
            #expect(updated.status == 200)
            #expect(updated.header("Location") == nil)
        }
    }

    /// `composite/batch`: independent subrequests, each answered with its status and result.
    @Test func compositeBatchRunsEachSubrequestOnItsOwn() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite/batch", json: ["batchRequests": [
                ["method": "POST", "url": "v62.0/sobjects/Account", "richInput": ["Name": "Batch One"]],
                ["method": "GET", "url": "v62.0/query?q=SELECT+Name+FROM+Account+WHERE+Name+=+'Batch+One'"],
                ["method": "PATCH", "url": "v62.0/sobjects/Account/001000000000000AAA", "richInput": ["Name": "x"]],
                ["method": "GET", "url": "v62.0/limits"],
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json["hasErrors"] == true)
            let results = try #require(reply.json["results"]?.arrayValue)
            #expect(results.map { $0["statusCode"]?.integerValue } == [201, 200, 404, 200])
            #expect(results[1]["result"]?["totalSize"] == 1, "the first subrequest's record is there for the second")
            #expect(try await emu.count("Account") >= 1)

            let halted = try await emu.rest("POST", "/composite/batch", json: ["haltOnError": true, "batchRequests": [
                ["method": "GET", "url": "v62.0/sobjects/Nope/describe"],
                ["method": "POST", "url": "v62.0/sobjects/Account", "richInput": ["Name": "Never"]],
            ]])
            #expect(halted.json["results"]?[1]?["statusCode"] == 412)
            #expect(halted.json["results"]?[1]?["result"]?[0]?["errorCode"] == "BATCH_PROCESSING_HALTED")
            let never = try await emu.rest("GET", "/query?q=SELECT+Id+FROM+Account+WHERE+Name+=+'Never'")
            #expect(never.json["totalSize"] == 0)
        }
    }

    /// The Collections retrieve for id lists too long for a URL, and it is not a write.
    @Test func collectionsRetrieveByPost() async throws {
        try await withEmulator { emu in
            let created = try await emu.rest("POST", "/sobjects/Account", json: ["Name": "Retrieve Me"])
            let id = try #require(created.json["id"]?.stringValue)
            let writesBefore = try await emu.stats()["requests"]?["writes"]?.integerValue ?? 0
            let reply = try await emu.rest("POST", "/composite/sobjects/Account", json: ["ids": [.string(id), "001000000000000AAA"], "fields": ["Name"]])
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json[0]?["Name"] == "Retrieve Me")
            #expect(reply.json[1] == .null)
            #expect(try await emu.stats()["requests"]?["writes"]?.integerValue == writesBefore)
            let bad = try await emu.rest("POST", "/composite/sobjects/Account", json: ["ids": [.string(id)]])
            #expect(bad.status == 400)
        }
    }

    /// Clauses clients add (amaxa, Data Loader), and the global describe keys they read.
    @Test func forViewWithSecurityEnforcedAndDescribeKeys() async throws {
        try await withEmulator { emu in
            let soql = "SELECT Id FROM Account WITH SECURITY_ENFORCED LIMIT 1 FOR VIEW"
            let reply = try await emu.rest("GET", "/query?q=" + soql.replacingOccurrences(of: " ", with: "+"))
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json["totalSize"] == 1)
            let global = try await emu.rest("GET", "/sobjects")
            let account = try #require(global.json["sobjects"]?.arrayValue?.first { $0["name"] == "Account" })
            for key in ["retrieveable", "searchable", "layoutable", "mruEnabled", "replicateable", "triggerable"] {
                #expect(account[key] == true, "\(key)")
            }
            #expect(try await emu.rest("GET", "/sobjects/Account/describe").json["mruEnabled"] == true)
            let contact = try await emu.rest("GET", "/sobjects/Contact/describe")
            let names = contact.json["fields"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(names.contains("Description") && names.contains("Title"), "the sample Contact has the fields real exports carry")
            // Description as an org describes it: a long text area, not filterable, sortable or groupable.
            let description = try #require(contact.json["fields"]?.arrayValue?.first { $0["name"] == "Description" })
            #expect(description["label"] == "Contact Description" && description["type"] == "textarea" && description["length"] == 32000)
            for key in ["filterable", "sortable", "groupable", "aggregatable"] { #expect(description[key] == false, "\(key)") }
            #expect(description["extraTypeInfo"] == "plaintextarea")
            #expect(contact.json["fields"]?.arrayValue?.first { $0["name"] == "Title" }?["filterable"] == true)
            #expect(account["deepCloneable"] == false)
            // toLabel() returns the value under the field's name (labels are the values here).
            let labelled = try await emu.rest("GET", "/query?q=" + "SELECT Name, toLabel(Industry) FROM Account WHERE Industry != null ORDER BY Name LIMIT 1"
                .replacingOccurrences(of: " ", with: "+").replacingOccurrences(of: "!=", with: "%21%3D"))
            #expect(labelled.status == 200, "\(labelled.text)")
            #expect(labelled.json["records"]?[0]?["Industry"]?.stringValue?.isEmpty == false)
        }
    }

    /// `SELECT CreatedBy.Name` (the audit references point at User), a fuller `/limits`, and
    /// `X-PrettyPrint: 1`.
    @Test func auditRelationshipsLimitsAndPrettyPrint() async throws {
        try await withEmulator { emu in
            let soql = "SELECT Name, CreatedBy.Username, LastModifiedBy.Username FROM Account LIMIT 1"
            let reply = try await emu.rest("GET", "/query?q=" + soql.replacingOccurrences(of: " ", with: "+"))
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json["records"]?[0]?["CreatedBy"]?["Username"]?.stringValue?.isEmpty == false, "\(reply.text)")
            let describe = try await emu.rest("GET", "/sobjects/Account/describe")
            let createdBy = describe.json["fields"]?.arrayValue?.first { $0["name"] == "CreatedById" }
            #expect(createdBy?["referenceTo"] == ["User"])
            #expect(createdBy?["relationshipName"] == "CreatedBy")
            let limits = try await emu.rest("GET", "/limits")
            #expect((limits.json.objectValue?.count ?? 0) >= 10)
            let pretty = try await emu.rest("GET", "/limits", headers: ["X-PrettyPrint": "1"])
            #expect(pretty.text.contains("\n  \""))
            #expect(pretty.json.objectValue?.keys.sorted() == limits.json.objectValue?.keys.sorted(), "the same answer, indented")
        }
    }

    static func loginEnvelope(_ username: String, _ password: String) -> Data {
        Data("""
            <?xml version="1.0" encoding="utf-8" ?>
            <env:Envelope xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                xmlns:env="http://schemas.xmlsoap.org/soap/envelope/" xmlns:urn="urn:partner.soap.sforce.com">
              <env:Header><urn:CallOptions><urn:client>test</urn:client></urn:CallOptions></env:Header>
              <env:Body><n1:login xmlns:n1="urn:partner.soap.sforce.com">
                <n1:username>\(username)</n1:username><n1:password>\(password)</n1:password>
              </n1:login></env:Body>
            </env:Envelope>
            """.utf8)
    }

    /// The SOAP partner `login` simple-salesforce (with a security token), amaxa and aiosalesforce
    /// use: a session id that works as a bearer token, or the INVALID_LOGIN fault.
    @Test func soapLoginGivesASessionOrTheLoginFault() async throws {
        try await withEmulator { emu in
            let reply = try await emu.send("POST", "/services/Soap/u/52.0", body: Self.loginEnvelope(SampleOrg.username, SampleOrg.password),
                                           contentType: "text/xml; charset=UTF-8", headers: ["SOAPAction": "login"], auth: .none)
            #expect(reply.status == 200, "\(reply.text)")
            let session = try #require(reply.text.range(of: "(?<=<sessionId>)[^<]+", options: .regularExpression).map { String(reply.text[$0]) })
            #expect(reply.text.contains("<serverUrl>\(emu.instanceURL)/services/Soap/u/52.0/00D"))
            #expect(reply.text.contains("<userName>\(SampleOrg.username)</userName>"))
            let query = try await emu.rest("GET", "/query?q=SELECT+Id+FROM+Account", auth: .token(session.replacingOccurrences(of: "&amp;", with: "&")))
            #expect(query.status == 200, "the session works as a bearer token")

            let wrong = try await emu.send("POST", "/services/Soap/u/52.0", body: Self.loginEnvelope(SampleOrg.username, "nope&amp;"),
                                           contentType: "text/xml; charset=UTF-8", headers: ["SOAPAction": "login"], auth: .none)
            #expect(wrong.status == 500)
            #expect(wrong.text.contains("<faultcode>sf:INVALID_LOGIN</faultcode>"))
            #expect(wrong.text.contains("<sf:exceptionCode>INVALID_LOGIN</sf:exceptionCode>"))
            #expect(!wrong.text.contains("nope"), "the password is never echoed")
        }
    }

    /// `GROUP BY` with aggregates, as CumulusCI and reports use it: one row per group.
    @Test func groupByGivesOneAggregateRowPerGroup() async throws {
        try await withEmulator { emu in
            let records: [JSONValue] = [("G1", "Energy", 10), ("G2", "Energy", 30), ("G3", "Banking", 5), ("G4", "Banking", 7), ("G5", "Banking", 1)]
                .map { ["attributes": ["type": "Account"], "Name": .string($0.0), "Industry": .string($0.1), "NumberOfEmployees": .integer(Int64($0.2))] }
            #expect(try await emu.rest("POST", "/composite/sobjects", json: ["records": .array(records)]).status == 200)
            let soql = "SELECT Industry, COUNT(Id) n, MAX(NumberOfEmployees), SUM(NumberOfEmployees) total FROM Account WHERE Name LIKE 'G_' GROUP BY Industry ORDER BY Industry"
            let reply = try await emu.rest("GET", "/query?q=" + (soql.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? soql))
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json["totalSize"] == 2)
            let rows = try #require(reply.json["records"]?.arrayValue)
            #expect(rows.map { $0["Industry"] } == ["Banking", "Energy"])
            #expect(rows.map { $0["n"] } == [3, 2])
            #expect(rows.map { $0["expr0"] } == [7, 30])
            #expect(rows[1]["total"]?.doubleValue == 40)
            #expect(rows[0]["attributes"]?["type"] == "AggregateResult")
            // HAVING keeps the groups whose aggregates (or grouped fields) pass.
            let having = "SELECT Industry, COUNT(Id) n FROM Account WHERE Name LIKE 'G_' GROUP BY Industry HAVING COUNT(Id) > 2 OR SUM(NumberOfEmployees) > 35 ORDER BY Industry"
            let kept = try await emu.rest("GET", "/query?q=" + (having.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? having))
            #expect(kept.status == 200, "\(kept.text)")
            #expect(kept.json["records"]?.arrayValue?.map { $0["Industry"] } == ["Banking", "Energy"])
            let strict = "SELECT Industry FROM Account WHERE Name LIKE 'G_' GROUP BY Industry HAVING MAX(NumberOfEmployees) < 10 AND Industry != 'Energy'"
            let one = try await emu.rest("GET", "/query?q=" + (strict.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? strict))
            #expect(one.json["records"]?.arrayValue?.map { $0["Industry"] } == ["Banking"], "\(one.text)")
            let ungrouped = try await emu.rest("GET", "/query?q=SELECT+Name,+COUNT(Id)+FROM+Account+GROUP+BY+Industry")
            #expect(ungrouped.status == 400)
            #expect(ungrouped.json[0]?["message"]?.stringValue?.contains("Field must be grouped or aggregated: Name") == true, "\(ungrouped.text)")
        }
    }
}
