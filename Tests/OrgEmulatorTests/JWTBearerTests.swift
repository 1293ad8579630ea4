import _CryptoExtras
import Foundation
import JSON
import OrgEmulatorTesting
import Testing
import X509

/// The OAuth JWT bearer flow: RS256 assertions checked against the user's certificate.
@Suite struct JWTBearerTests {
    /// A seed whose first user has a certificate for `key`, written to a temp file.
    func seed(with key: _RSA.Signing.PrivateKey) throws -> String {
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName { CommonName("syncpipeline-jwt-test") }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: certificateKey.publicKey,
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86400),
            issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(),
            issuerPrivateKey: certificateKey)
        let pem = try certificate.serializeAsPEM().pemString
        var document = try JSONParser.parse(String(contentsOfFile: SampleOrg.seedPath, encoding: .utf8)).objectValue!
        var users = document["users"]!.arrayValue!
        var user = users[0].objectValue!
        user["jwtCertificate"] = .string(pem)
        users[0] = .object(user)
        document["users"] = .array(users)
        let path = NSTemporaryDirectory() + "jwt-seed-\(UUID().uuidString).json"
        try JSONValue.object(document).jsonString.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func assertion(_ claims: JSONValue, key: _RSA.Signing.PrivateKey) throws -> String {
        func encode(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let signingInput = encode(Data(#"{"alg":"RS256"}"#.utf8)) + "." + encode(Data(claims.jsonString.utf8))
        let signature = try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + encode(signature.rawRepresentation)
    }

    @Test func validAssertionGetsATokenAndBadOnesAreRefused() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let seedPath = try seed(with: key)
        defer { try? FileManager.default.removeItem(atPath: seedPath) }
        try await withEmulator(seedPath: seedPath) { (emu) async throws in
            let now = Int64(Date().timeIntervalSince1970)
            let claims: JSONValue = ["iss": "demo-client", "sub": "demo@syncpipeline.dev", "aud": "https://login.salesforce.com",
                                     "exp": .integer(now + 300)]
            let grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
            let ok = try await emu.oauthToken([("grant_type", grant), ("assertion", try assertion(claims, key: key))])
            #expect(ok.status == 200, "\(ok.text)")
            let token = try #require(ok.json["access_token"]?.stringValue)
            #expect(try await emu.rest("GET", "/limits", auth: .token(token)).status == 200)

            func refused(_ claims: JSONValue, signedBy signer: _RSA.Signing.PrivateKey = key) async throws -> JSONValue {
                let reply = try await emu.oauthToken([("grant_type", grant), ("assertion", try assertion(claims, key: signer))])
                #expect(reply.status == 400)
                return reply.json
            }
            var expired = claims.objectValue!
            expired["exp"] = .integer(now - 10)
            #expect(try await refused(.object(expired)) == ["error": "invalid_grant", "error_description": "expired authorization code"])
            var audience = claims.objectValue!
            audience["aud"] = "https://example.com"
            #expect(try await refused(.object(audience))["error_description"] == "audience is invalid")
            var stranger = claims.objectValue!
            stranger["sub"] = "nobody@example.com"
            #expect(try await refused(.object(stranger))["error_description"] == "user hasn't approved this consumer")
            let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            #expect(try await refused(claims, signedBy: otherKey)["error_description"] == "invalid assertion: signature does not verify")
            let garbage = try await emu.oauthToken([("grant_type", grant), ("assertion", "not.a.jwt")])
            #expect(garbage.json["error"] == "invalid_grant")
        }
    }

    @Test func usersWithoutACertificateCannotUseJWT() async throws {
        try await withEmulator { (emu) async throws in
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let claims: JSONValue = ["iss": "demo-client", "sub": "demo@syncpipeline.dev", "aud": "https://login.salesforce.com",
                                     "exp": .integer(Int64(Date().timeIntervalSince1970) + 300)]
            let reply = try await emu.oauthToken([("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                                                  ("assertion", try assertion(claims, key: key))])
            #expect(reply.status == 400)
            #expect(reply.json["error_description"] == "user hasn't approved this consumer")
        }
    }
}
