import Connectors
import Foundation
import Testing

/// Plain http is allowed only to this machine, decided on the parsed address: a host name that
/// merely starts with `127.` resolves through DNS to anywhere, and would get the password and the
/// client secret in clear text.
@Suite struct LoopbackTests {
    @Test(arguments: ["127.0.0.1", "127.1.2.3", "127.255.255.254", "localhost", "LOCALHOST", "::1", "[::1]", "0:0:0:0:0:0:0:1"])
    func loopback(host: String) {
        #expect(LoopbackHost.contains(host))
    }

    @Test(arguments: ["127.attacker.example", "127.0.0.1.nip.io", "128.0.0.1", "10.0.0.1", "localhost.example", "0x7f.0.0.1",
                      "127.0.0.1%20", "::2", "", "1.127.0.0"])
    func notLoopback(host: String) {
        #expect(!LoopbackHost.contains(host))
    }

    @Test(arguments: ["http://127.attacker.example", "http://127.0.0.1.nip.io:8383", "http://example.com"])
    func plainHTTPToAnotherHostIsRefusedBeforeAnyRequest(url: String) throws {
        #expect(throws: OrgClientError.self) {
            _ = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: url, loginURL: url,
                                                                    auth: .accessToken(accessToken: "secret-token")))
        }
    }

    @Test func plainHTTPToThisMachineIsAllowed() throws {
        _ = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: "http://127.0.0.1:8383", loginURL: "http://127.0.0.1:8383",
                                                                auth: .accessToken(accessToken: "secret-token")))
    }
}
