; oooi-digest: 29aa95965fdb9c2b59896440ce4dad8d857ca039f69343541d289f7ee1392fe0
$ORIGIN oauth.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.beta.clusters.example.com. hostmaster.oauth.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.beta.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
