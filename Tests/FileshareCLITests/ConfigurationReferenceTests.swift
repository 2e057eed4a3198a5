import Foundation
import Testing

@testable import fileshare

/// The one table of settings (`ServeSetting.all`) against what is written
/// about it: the reference page and the example file.
@Suite("the configuration's reference and example")
struct ConfigurationReferenceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The rows of the table of `Documentation/configuration.md`: key, default, flag, variable, without a restart.
    static func referenceRows() throws -> [[String]] {
        let text = try String(
            contentsOf: root.appendingPathComponent("Documentation/configuration.md"), encoding: .utf8)
        return text.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { line in
            line.split(separator: "|").map { cell in
                let trimmed = cell.trimmingCharacters(in: .whitespaces)
                return trimmed.hasPrefix("`") && trimmed.hasSuffix("`")
                    ? String(trimmed.dropFirst().dropLast()) : trimmed
            }
        }
    }

    @Test("configuration.md lists every setting, with its default, flag and variable, and no other")
    func referenceMatchesTheCode() throws {
        let rows = try Self.referenceRows()
        #expect(rows.map { $0[0] } == ServeSetting.all.map(\.key))
        for (row, setting) in zip(rows, ServeSetting.all) {
            #expect(row.count >= 6, "\(row)")
            #expect(row[1] == (setting.defaultValue ?? "—"), "\(setting.key): the page says \(row[1])")
            #expect(row[2] == (setting.flag ?? "—"), "\(setting.key): the page says \(row[2])")
            #expect(row[3] == setting.environmentName, "\(setting.key): the page says \(row[3])")
            #expect(row[4].hasPrefix("yes") == setting.reloads, "\(setting.key): the page says \(row[4])")
        }
    }

    @Test("every flag of serve has its setting, and every setting's flag is one of serve's")
    func flagsMatchTheCommand() async throws {
        let run = try CommandProcess(["serve", "--help"])
        #expect(await run.exitStatus() == 0)
        let help = (run.lines + [run.errorOutput]).joined(separator: "\n") + "\n"
        for setting in ServeSetting.all {
            guard let flag = setting.flag, flag != "DIR" else { continue }
            #expect(help.contains(flag + " ") || help.contains(flag + "\n"), "\(flag) is not a flag of serve")
        }
        let flags = help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," || $0 == "[" || $0 == "]" })
            .filter { $0.hasPrefix("--") && $0.dropFirst(2).allSatisfy { $0.isLowercase || $0 == "-" } }
            .map(String.init)
        let known = Set(ServeSetting.all.compactMap(\.flag)).union([
            "--config", "--check-config", "--help", "--version",
        ])
        for flag in Set(flags) {
            #expect(known.contains(flag), "\(flag) of serve has no setting")
        }
    }

    @Test("Packaging/fileshare.yaml parses, sets every key that has a default to it, and names the others")
    func exampleIsTheDefaults() async throws {
        let path = Self.root.appendingPathComponent("Packaging/fileshare.yaml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let check = ConfigurationFileCheck(path: path, text: text)
        #expect(check.problems.isEmpty, "\(check.problems)")
        let fromFile = try await ConfigurationLayers.resolve(flags: [:], environment: [:], file: check)
        let defaults = try await ConfigurationLayers.resolve(flags: [:], environment: [:], file: nil)
        for setting in ServeSetting.all {
            #expect(fromFile.texts[setting.key] == setting.defaultValue, "\(setting.key)")
            if setting.defaultValue == nil {
                // Shown commented out, with an example.
                let name = setting.components.last ?? setting.key
                #expect(text.contains("# \(name): "), "\(setting.key) is not in the example")
            } else {
                #expect(check.lines[setting.key] != nil, "\(setting.key) is not in the example")
            }
        }
        #expect(ServeSettings(fromFile) == ServeSettings(defaults))
    }

    @Test("sizes, times and switches read as the reference says")
    func values() {
        #expect(ServeSetting.parseSize("500M") == 500 << 20)
        #expect(ServeSetting.parseSize("1g") == 1 << 30)
        #expect(ServeSetting.parseSize("12") == 12)
        #expect(ServeSetting.parseSize("-1") == nil && ServeSetting.parseSize("M") == nil)
        #expect(ServeSetting.parseSize("99999999999T") == nil)
        #expect(ServeSetting.durationValue("90s", most: 100, optional: false) == .some(.seconds(90)))
        #expect(ServeSetting.durationValue("1.5", most: 100, optional: false) == .some(.milliseconds(1500)))
        #expect(ServeSetting.durationValue("2h", most: 86_400, optional: false) == .some(.seconds(7200)))
        #expect(ServeSetting.durationValue("30d", most: 86_400, optional: false) == nil)
        #expect(ServeSetting.durationValue("0", most: 100, optional: false) == nil)
        #expect(ServeSetting.durationValue("unlimited", most: 100, optional: true) == .some(nil))
        #expect(ServeSetting.durationValue("unlimited", most: 100, optional: false) == nil)
        #expect(ServeSetting.switchValue("Yes") == true && ServeSetting.switchValue("off") == false)
        #expect(ServeSetting.switchValue("maybe") == nil)
        #expect(ConfigurationFileCheck.closestKey(to: "prot") == "port")
        #expect(ConfigurationFileCheck.closestKey(to: "versions.max-cont") == "versions.max-count")
        #expect(ConfigurationFileCheck.closestKey(to: "max-age") != nil)
        #expect(ConfigurationFileCheck.closestKey(to: "completely-different") == nil)
    }
}
