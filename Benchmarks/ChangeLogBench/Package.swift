// swift-tools-version: 6.1
// Appends per second of the change log, run by Benchmarks/changelog-run:
// its own package, so the project's build and tests never build it.
import PackageDescription

let package = Package(
    name: "ChangeLogBench",
    dependencies: [
        .package(name: "fileshare", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "changelog-bench",
            dependencies: [
                .product(name: "ChangeLog", package: "fileshare"),
                .product(name: "FileWatching", package: "fileshare"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ]
)
