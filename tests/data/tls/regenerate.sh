#!/usr/bin/env bash
# Makes the test CA and the loopback server certificate it signs, valid from 2000 to 2125, so
# the TLS tests (a provider's `ca_file`) never depend on the date or on the clock of the machine
# that made them. Run once; the results are kept in the repository. Needs the openssl command.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/index.txt"
cat > "$work/ca.cnf" <<CNF
[ca]
default_ca = test_ca
[test_ca]
database = $work/index.txt
new_certs_dir = $work
serial = $work/serial
default_md = sha256
policy = any
unique_subject = no
[any]
commonName = supplied
[ca_extensions]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_extensions]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
authorityKeyIdentifier = keyid
CNF
echo 01 > "$work/serial"
dates=(-startdate 20000101000000Z -enddate 21250101000000Z)

openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=Switchyard test CA" -keyout "$work/ca.key" -out "$work/ca.csr"
openssl ca -batch -notext -config "$work/ca.cnf" -selfsign -keyfile "$work/ca.key" \
    -extensions ca_extensions "${dates[@]}" -in "$work/ca.csr" -out ca.pem

openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=127.0.0.1" -keyout server.key -out "$work/server.csr"
openssl ca -batch -notext -config "$work/ca.cnf" -cert ca.pem -keyfile "$work/ca.key" \
    -extensions server_extensions "${dates[@]}" -in "$work/server.csr" -out server.pem
# The CA's key is not kept: it would only invite signing something else with it.
