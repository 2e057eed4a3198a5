// swift-tools-version: 6.1
// The cost of keeping versions, run by Benchmarks/versions-run: its own
// package, so the project's build and tests never build it.
import PackageDescription

let package = Package(
    name: "VersionsBench",
    dependencies: [
        .package(name: "fileshare", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "versions-bench",
            dependencies: [
                .product(name: "Versions", package: "fileshare"),
                .product(name: "FileWatching", package: "fileshare"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ]
)
