import { Command, Option } from "commander";
import type { StatusPageSettings, StatusPageUpdateInput } from "@probe/client";
import type { CliContext } from "../context.ts";
import { link, originOption } from "../links.ts";
import { list } from "../options.ts";
import { record } from "../output.ts";

/** The settings one field a line, with the page's addresses in full, then whether anyone sees it. */
const showPage = (page: StatusPageSettings, base: string) => {
  const pageUrl = link(base, page.page_path);
  const fields = record({
    project: page.project,
    public: page.public,
    title: page.title,
    description: page.description,
    show_urls: page.show_urls,
    show_locations: page.show_locations,
    probes: page.probe_ids === null ? "all" : page.probe_ids.join(", "),
    page_url: pageUrl,
    json_url: link(base, page.json_path),
    updated_at: page.updated_at,
  });
  const note = page.public
    ? `Public: anyone can open ${pageUrl}`
    : `Private: ${pageUrl} answers 404 until it is made public ` +
      `(status-page set ${page.project} --public).`;
  return `${fields}\n\n${note}`;
};

interface SetOptions {
  public?: boolean;
  title?: string | false;
  description?: string | false;
  showUrls?: boolean;
  showLocations?: boolean;
  probes?: string[] | false;
  origin?: string;
}

/** `--no-title` and `--no-description` send null: the text goes back to its default. */
const textOf = (value: string | false | undefined) => value === false ? null : value;

/** `status-page get|set`: a project's public status page settings, and where the page is. */
export function statusPageCommand(context: () => CliContext): Command {
  const statusPage = new Command("status-page")
    .description("Read and change a project's public status page, and print its address");

  statusPage.command("get")
    .description("Show a project's status page settings and its address")
    .argument("<project>", "project name")
    .addOption(originOption())
    .action(async (project: string, options: { origin?: string }) => {
      const { client, out, serviceUrl } = context();
      const result = await client().statusPages.get({ project });
      out.result(() => showPage(result.data, options.origin ?? serviceUrl), result);
    });

  statusPage.command("set")
    .description("Change the fields given; the others keep their values")
    .argument("<project>", "project name")
    .addOption(new Option("--public", "serve the page without a key"))
    .addOption(new Option("--no-public", "make the page private again (it answers 404)"))
    .option("--title <text>", "the page's heading, 1 to 200 characters")
    .option("--no-title", "heading back to the default: the project's label, or its name")
    .option("--description <text>", "a paragraph under the heading, up to 2000 characters")
    .option("--no-description", "no paragraph")
    .option("--show-urls", "show each probe's URL (without credentials and query values)")
    .option("--no-show-urls", "name probes by their label, or Check N, never by URL")
    .option("--show-locations", "name each probe's locations with their states")
    .option("--no-show-locations", "one state per probe, no location names (the default)")
    .option(
      "--probes <ids>",
      "show only these probes, in this order (probe ids, comma-separated)",
      list,
    )
    .option("--no-probes", "show every probe of the project (the default)")
    .addOption(originOption())
    .action(async (project: string, options: SetOptions) => {
      const { client, out, serviceUrl } = context();
      const input: StatusPageUpdateInput = {
        project,
        public: options.public,
        title: textOf(options.title),
        description: textOf(options.description),
        show_urls: options.showUrls,
        show_locations: options.showLocations,
        probe_ids: options.probes === false ? null : options.probes,
      };
      const result = await client().statusPages.update(input);
      out.result(() => showPage(result.data, options.origin ?? serviceUrl), result);
    });

  return statusPage;
}
