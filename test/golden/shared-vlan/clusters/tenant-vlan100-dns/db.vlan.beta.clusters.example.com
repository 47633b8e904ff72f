; oooi-digest: b8d729ae3f919677ab77c157bbe6bc5dd06b69f6c15aa6767cf157a8b4c74ca3
$ORIGIN beta.clusters.example.com.
$TTL 30
@ IN SOA ns.beta.clusters.example.com. hostmaster.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.beta.clusters.example.com.
ns IN A 192.0.2.3
api IN A 192.0.2.4
api-int IN A 192.0.2.4
ignition IN A 192.0.2.4
konnectivity IN A 192.0.2.4
oauth IN A 192.0.2.4
