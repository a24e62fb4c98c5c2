package risk

// The options of the programs that change files: the gate lets them run
// without asking only in acceptEdits mode or under an allow rule, and an
// option nobody listed still makes them unknown.
func init() {
	specSources = append(specSources, specSource{"files", `
rm: -f|--force -i -I --interactive?=inert --one-file-system --no-preserve-root --preserve-root?=inert
  -r|-R|--recursive -d|--dir -v|--verbose --help --version
cp: -a|--archive --attributes-only --backup?=inert -b --copy-contents -d -f|--force -i|--interactive -H
  -l|--link -L|--dereference -n|--no-clobber -P|--no-dereference -p --preserve?=inert --no-preserve=inert
  --parents -r|-R|--recursive --reflink?=inert --remove-destination --sparse=inert
  --strip-trailing-slashes -s|--symbolic-link -S|--suffix=inert -t|--target-directory=write
  -T|--no-target-directory -u|--update?=inert -v|--verbose --keep-directory-symlink
  -x|--one-file-system -Z --context?=inert --debug --help --version
mv: --backup?=inert -b --debug --exchange -f|--force -i|--interactive -n|--no-clobber --no-copy
  --strip-trailing-slashes -S|--suffix=inert -t|--target-directory=write -T|--no-target-directory
  -u|--update?=inert -v|--verbose -Z|--context --help --version
ln: --backup?=inert -b -d|-F|--directory -f|--force -i|--interactive -L|--logical -n|--no-dereference
  -P|--physical -r|--relative -s|--symbolic -S|--suffix=inert -t|--target-directory=write
  -T|--no-target-directory -v|--verbose --help --version
install: --backup?=inert -b -c -C|--compare -d|--directory -D -g|--group=inert -m|--mode=inert
  -o|--owner=inert -p|--preserve-timestamps -s|--strip --strip-program=exec -S|--suffix=inert
  -t|--target-directory=write -T|--no-target-directory -v|--verbose --preserve-context -Z
  --context?=inert --debug --help --version
mkdir: -m|--mode=inert -p|--parents -v|--verbose -Z --context?=inert --help --version
rmdir: --ignore-fail-on-non-empty -p|--parents -v|--verbose --help --version
touch: -a -c|--no-create -d|--date=inert -f -h|--no-dereference -m -r|--reference=read -t=inert
  --time=inert --help --version
truncate: -c|--no-create -o|--io-blocks -r|--reference=read -s|--size=inert --help --version
tee: -a|--append -i|--ignore-interrupts -p --output-error?=inert --help --version
chmod: -c|--changes -f|--silent|--quiet -v|--verbose --dereference -h|--no-dereference
  --no-preserve-root --preserve-root --reference=read -R|--recursive -H -L -P --help --version
chown chgrp: -c|--changes -f|--silent|--quiet -v|--verbose --dereference -h|--no-dereference
  --from=inert --no-preserve-root --preserve-root --reference=read -R|--recursive -H -L -P --help
  --version
shred: -f|--force -n|--iterations=inert --random-source=read -s|--size=inert -u --remove?=inert
  -v|--verbose -x|--exact -z|--zero --help --version
unlink: --help --version
`})
}
