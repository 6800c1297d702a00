package snapshot

import (
	"encoding/binary"
	"hash/crc32"
)

// withChecksum frames a body as a snapshot with a valid checksum.
func withChecksum(body []byte) []byte {
	data := append([]byte(Magic), binary.LittleEndian.AppendUint16(nil, FormatVersion)...)
	data = append(data, body...)
	return binary.LittleEndian.AppendUint32(data, crc32.Checksum(data, castagnoli))
}
