#!/bin/sh
# Makes the test-only TLS material of server/runner/kinds/testdata (OpenSSL 3.0). Run in an
# empty directory; copy the .pem and .key files over. The CA's key is thrown away at the end.
set -eu
p256() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
p256 ca.key
openssl req -x509 -new -key ca.key -sha256 -days 36500 -subj "/CN=probe-service test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out ca.pem
p256 leaf.key
mkdir -p db && : > db/index.txt && echo 1000 > db/serial
cat > ca.cnf <<'CNF'
[ca]
default_ca = test
[test]
dir = .
database = db/index.txt
serial = db/serial
new_certs_dir = db
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
commonName = supplied
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:${ENV::NAME}
CNF
# sign NAME OUT START END: a leaf for NAME, valid from START to END (YYYYMMDDHHMMSSZ).
sign() {
  openssl req -new -key leaf.key -subj "/CN=$1" -out "$2.csr"
  NAME="$1" openssl ca -batch -config ca.cnf -extensions leaf -notext \
    -startdate "$3" -enddate "$4" -in "$2.csr" -out "$2.pem"
}
sign probe.test probe.test 20250101000000Z 21260101000000Z
sign other.test other.test 20250101000000Z 21260101000000Z
sign probe.test expired 20200101000000Z 20210101000000Z
sign probe.test not_yet_valid 21260101000000Z 21270101000000Z
openssl req -x509 -new -key leaf.key -sha256 -days 36500 -subj "/CN=probe.test" \
  -addext "subjectAltName=DNS:probe.test" -out self_signed.pem
rm -rf ca.key db ca.cnf ./*.csr
# A second authority for PROBE_CA_FILE's test, and a leaf of leaf.key for the address 127.0.0.1.
p256 private_ca.key
openssl req -x509 -new -key private_ca.key -sha256 -days 36500 \
  -subj "/CN=probe-service private test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out private_ca.pem
openssl req -new -key leaf.key -subj "/CN=127.0.0.1" -out loopback.csr
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' >loopback.ext
openssl x509 -req -in loopback.csr -CA private_ca.pem -CAkey private_ca.key -CAcreateserial \
  -days 36500 -sha256 -extfile loopback.ext -out loopback.pem
rm private_ca.key
