#!/usr/bin/env python3
"""Sample files for the thumbnail tests, written with the standard library
only (zlib, zipfile, struct), so that every byte is what the test asks for.

  make_sample.py png OUT WIDTH HEIGHT [--interlace] [--exif-orientation N]
                 [--truncate FRACTION] [--declare WxH]
      A two-colour PNG: the top-left quadrant red, the rest blue. --declare
      writes a header of that size over a few rows (a decompression bomb).
  make_sample.py zip OUT NAME=FILE... [--deflate] [--claim NAME=BYTES]
                 [--bomb NAME=BYTES]
      A ZIP of the files; --claim makes the directory say NAME has BYTES
      (ZIP64); --bomb adds NAME holding BYTES zero bytes, deflated, whose
      directory says 1,000.
"""
import struct
import sys
import zipfile
import zlib


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def quadrant_row(width, height, y):
    red, blue = b"\xff\x00\x00", b"\x00\x00\xff"
    half = width // 2
    if y < height // 2:
        return red * half + blue * (width - half)
    return blue * width


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def png(out, width, height, interlace=False, orientation=None, truncate=None, declare=None):
    header_width, header_height = declare or (width, height)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", header_width, header_height, 8, 2, 0, 0, 1 if interlace else 0))
    if orientation:
        # A TIFF block with IFD0's Orientation, little-endian.
        tiff = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1)
        tiff += struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack("<I", 0)
        data += chunk(b"eXIf", tiff)
    compressor = zlib.compressobj(1)
    idat = []
    rows_cache = {}

    def row(y):
        top = y < height // 2
        if top not in rows_cache:
            rows_cache[top] = quadrant_row(width, height, y)
        return rows_cache[top]

    if interlace:
        for x0, y0, dx, dy in ADAM7:
            if x0 >= width:
                continue
            for y in range(y0, height, dy):
                line = row(y)
                pixels = b"".join(line[x * 3:x * 3 + 3] for x in range(x0, width, dx))
                idat.append(compressor.compress(b"\x00" + pixels))
    else:
        for y in range(height):
            idat.append(compressor.compress(b"\x00" + row(y)))
    idat.append(compressor.flush())
    body = b"".join(idat)
    data += chunk(b"IDAT", body) + chunk(b"IEND", b"")
    if truncate:
        data = data[: int(len(data) * truncate)]
    with open(out, "wb") as file:
        file.write(data)


def zip_sample(out, files, deflate, claims, bombs):
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", method) as archive:
        for name, path in files:
            with open(path, "rb") as source:
                content = source.read()
            if name in claims:
                with archive.open(zipfile.ZipInfo(name), "w", force_zip64=True) as entry:
                    entry.write(content)
            else:
                archive.writestr(name, content)
        for name, size in bombs:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w", force_zip64=True) as entry:
                block = b"\x00" * (1 << 20)
                for _ in range(size >> 20):
                    entry.write(block)
    if not claims and not bombs:
        return
    # The directory rewritten: a claim's size in a ZIP64 extra field, a
    # bomb's small lie in the plain field.
    claimed = dict(claims)
    lies = {name: 1000 for name, _ in bombs}
    data = open(out, "rb").read()
    end = data.rfind(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack_from("<II", data, end + 12)
    directory = bytearray()
    position = cd_offset
    while data[position:position + 4] == b"PK\x01\x02":
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, position + 28)
        record = bytearray(data[position:position + 46 + name_length + extra_length + comment_length])
        name = record[46:46 + name_length].decode()
        if name in claimed:
            struct.pack_into("<I", record, 24, 0xFFFFFFFF)
            extra = struct.pack("<HHQ", 1, 8, claimed[name])
            record = record[:46 + name_length] + extra + record[46 + name_length + extra_length:]
            struct.pack_into("<H", record, 30, len(extra))
        elif name in lies:
            struct.pack_into("<I", record, 24, lies[name])
        directory += record
        position += 46 + name_length + extra_length + comment_length
    tail = bytearray(data[end:])
    struct.pack_into("<II", tail, 12, len(directory), cd_offset)
    open(out, "wb").write(data[:cd_offset] + bytes(directory) + bytes(tail))


def main(arguments):
    kind, out = arguments[0], arguments[1]
    rest = arguments[2:]

    def option(name, default=None):
        if name in rest:
            index = rest.index(name)
            value = rest[index + 1]
            del rest[index:index + 2]
            return value
        return default

    def options(name):
        values = []
        while name in rest:
            values.append(option(name))
        return values

    if kind == "png":
        interlace = "--interlace" in rest
        if interlace:
            rest.remove("--interlace")
        orientation = option("--exif-orientation")
        truncate = option("--truncate")
        declare = option("--declare")
        width, height = int(rest[0]), int(rest[1])
        png(out, width, height, interlace, int(orientation) if orientation else None,
            float(truncate) if truncate else None,
            tuple(int(v) for v in declare.split("x")) if declare else None)
    elif kind == "zip":
        deflate = "--deflate" in rest
        if deflate:
            rest.remove("--deflate")
        claims = [(c.split("=")[0], int(c.split("=")[1])) for c in options("--claim")]
        bombs = [(b.split("=")[0], int(b.split("=")[1])) for b in options("--bomb")]
        files = [tuple(item.split("=", 1)) for item in rest]
        zip_sample(out, files, deflate, claims, bombs)
    else:
        raise SystemExit("unknown kind " + kind)


if __name__ == "__main__":
    main(sys.argv[1:])
